package extdriver_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/extdriver/adapter"
)

// ordered is Memory's mutex with its waiters taking turns in arrival order (a fair lock), or,
// with lifo, the latest arrival first: a lock that claims fair and is not, for driver-check to
// catch. Each waiter waits for its turn, then for the lock in Memory; the turn passes when it is
// granted or gives up.
type ordered struct {
	*adapter.Memory
	lifo    bool
	mu      sync.Mutex
	waiting map[string][]chan struct{} // per lock, the waiters' turns in arrival order; a closed one is the turn's holder
}

func newOrdered(m *adapter.Memory, lifo bool) *ordered {
	return &ordered{Memory: m, lifo: lifo, waiting: map[string][]chan struct{}{}}
}

func (o *ordered) Hello() extdriver.Hello {
	return extdriver.Hello{Library: "ordered test lock", Version: "1", Kinds: []string{extdriver.KindMutex, extdriver.KindFair}}
}

// TryAcquire grants only when nobody waits: a free lock with waiters is theirs.
func (o *ordered) TryAcquire(owner, name string) (bool, error) {
	o.mu.Lock()
	queued := len(o.waiting[name]) > 0
	o.mu.Unlock()
	if queued {
		return false, nil
	}
	return o.Memory.TryAcquire(owner, name)
}

func (o *ordered) Acquire(ctx context.Context, owner, name string) error {
	turn := make(chan struct{})
	o.mu.Lock()
	o.waiting[name] = append(o.waiting[name], turn)
	if len(o.waiting[name]) == 1 {
		close(turn)
	}
	o.mu.Unlock()
	select {
	case <-turn:
	case <-ctx.Done():
		o.leave(name, turn)
		return ctx.Err()
	}
	err := o.Memory.Acquire(ctx, owner, name)
	o.leave(name, turn)
	return err
}

// leave takes turn out of name's queue and, if it held the turn, gives the turn to the next:
// the first to arrive, or with lifo the last.
func (o *ordered) leave(name string, turn chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	q := o.waiting[name]
	for i, t := range q {
		if t == turn {
			q = append(q[:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(o.waiting, name)
		return
	}
	o.waiting[name] = q
	select {
	case <-turn: // it held the turn
	default:
		return
	}
	next := q[0]
	if o.lifo {
		next = q[len(q)-1]
	}
	close(next)
}

// TestCheckFair: a lock whose hello claims fair is held to arrival order: one that keeps it
// passes the fair rule, one that grants the latest waiter first fails it, the rule and the order
// named; an adapter that does not claim fair is not checked for it.
func TestCheckFair(t *testing.T) {
	fails, out := checkSelf(t, "fifo", "", drivers.Config{Addrs: []string{"127.0.0.1:1"}}, nil)
	if len(fails) != 0 || !strings.Contains(out, "ok   fair\n") {
		t.Fatalf("a FIFO lock fails driver-check, or fair is not checked:\n%s", out)
	}
	fails, out = checkSelf(t, "lifo", "", drivers.Config{Addrs: []string{"127.0.0.1:1"}}, nil)
	if len(fails) != 1 || fails[0].Rule != extdriver.RuleFair || !strings.Contains(fails[0].Detail, "granted in the order q1 q4 q3 q2") {
		t.Fatalf("a LIFO lock claiming fair: failures %v; want the fair rule alone, with the order:\n%s", fails, out)
	}
	_, out = checkSelf(t, "null", "", drivers.Config{Addrs: []string{"127.0.0.1:1"}}, nil)
	if strings.Contains(out, " fair") {
		t.Fatalf("the null adapter does not claim fair, but was checked for it:\n%s", out)
	}

}
