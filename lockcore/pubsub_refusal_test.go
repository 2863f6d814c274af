package lockcore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/lockhooks"
	"github.com/redis/rueidis"
)

// A waiter whose SUBSCRIBE the server refuses (an ACL user without it) still waits, polling at
// the TTL, and nothing failed: the refusal went unreported (issue 36). It is counted, with the
// server's message.
func TestRefusedSubscribeIsCounted(t *testing.T) {
	e := newEnv(t)
	admin := e.masters[0]
	if err := admin.Do(context.Background(), admin.B().Arbitrary("ACL", "SETUSER", "nosub", "on", ">pw", "~*", "&*", "+@all", "-subscribe").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	ue := newEnvFor(t, rueidis.ClientOption{InitAddress: []string{e.addr}, Username: "nosub", Password: "pw"}, []string{e.addr}, false)
	holder, waiter := ue.client(t, Options{}), ue.client(t, Options{knobs: lockhooks.Knobs{NoLocalQueue: true}})
	ctx := ctxT(t, 30*time.Second)
	o, m := holder.NewOwner(), holder.Mutex("refused")
	if err := m.Lock(ctx, o); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if err := waiter.Mutex("refused").Lock(wctx, waiter.NewOwner()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiter's Lock = %v, want the deadline (the lock is held)", err)
	}
	n, first := waiter.SubscribeRefusals()
	if n == 0 || !strings.Contains(first, "NOPERM") {
		t.Errorf("SubscribeRefusals = %d, %q; want the refused SUBSCRIBE with NOPERM", n, first)
	}
	if err := m.Unlock(ctx, o); err != nil {
		t.Fatal(err)
	}
	if n, _ := holder.SubscribeRefusals(); n != 0 {
		t.Errorf("the holder, which never waited, counts %d refusals", n)
	}
}
