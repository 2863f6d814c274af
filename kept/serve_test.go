package kept

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/target"
)

// logLines collects what Serve logs; safe for concurrent use.
type logLines struct {
	mu sync.Mutex
	l  []string
}

func (l *logLines) logf(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.l = append(l.l, fmt.Sprintf(format, a...))
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.l, "\n")
}

// Serve keeps a topology up until its context ends: the state file and the summary while it
// runs, everything stopped and removed once ctx ends. (A second up of the name, refused, is
// cmd/lockbench's TestUpRefusesATakenName: only a process that is lockbench up owns a name.)
func TestServe(t *testing.T) {
	t.Parallel()
	needRedis(t)
	dir := filepath.Join(t.TempDir(), "state")
	o := UpOptions{Dir: dir, Name: "srv", Provider: target.ProviderNative, Topology: compose.Spec{Kind: compose.KindSingle}}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout bytes.Buffer
	log := &logLines{}
	var abandon func()
	done := make(chan error, 1)
	go func() {
		interrupted, err := Serve(ctx, o, &stdout, log.logf, func(f func()) { abandon = f })
		if interrupted {
			err = errors.Join(err, errors.New("interrupted"))
		}
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(log.String(), "is up (pid") {
		if time.Now().After(deadline) {
			t.Fatalf("not up after 30 s; log:\n%s", log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	st, err := Read(Path(dir, "srv"))
	if err != nil || st.Description == nil || len(st.Description.Nodes) != 1 {
		t.Fatalf("state while up = %+v, %v", st, err)
	}
	if err := Ping(st.Description.Nodes[0].Addr, 2*time.Second, false); err != nil {
		t.Errorf("PING the node: %v", err)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if abandon == nil {
		t.Error("Up.Abandon not handed over")
	}
	if !strings.Contains(stdout.String(), "addr ") {
		t.Errorf("summary %q lacks the addr line", stdout.String())
	}
	if l := log.String(); !strings.Contains(l, "starting single (native provider)") || !strings.HasSuffix(l, "stopping single\nstopped") {
		t.Errorf("log:\n%s\nwant the start and the stop", l)
	}
	if _, err := Read(Path(dir, "srv")); err == nil {
		t.Error("the state file is left after Serve returned")
	}
	if err := Ping(st.Description.Nodes[0].Addr, time.Second, false); err == nil {
		t.Error("the node still answers after Serve returned")
	}
}

// A name that cannot be claimed (here a state directory under a file) is an error, said on
// logf, not an interrupted start; nothing is started and no abandon is handed over.
func TestServeCannotClaim(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	o := UpOptions{Dir: filepath.Join(file, "state"), Name: "x", Provider: target.ProviderNative, Topology: compose.Spec{Kind: compose.KindSingle}}
	log := &logLines{}
	interrupted, err := Serve(t.Context(), o, &bytes.Buffer{}, log.logf, func(func()) { t.Error("abandon handed over without a claim") })
	if err == nil || interrupted || !strings.Contains(log.String(), err.Error()) || strings.Contains(log.String(), "starting") {
		t.Errorf("Serve = %v, %v; log %q: want the error logged, not interrupted, nothing started", interrupted, err, log)
	}
}
