package adapter

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/lockbench/lockbench/extdriver"
)

// Faults an adapter can be given on purpose, to show that lockbench and driver-check catch
// them: negative controls, never a default.
const (
	// FaultNoLock grants every acquire without locking: driver-check must fail it on exclusion.
	FaultNoLock = "nolock"
	// FaultDie ("die-after=N") exits with status 3 at the Nth acquire.
	FaultDie = "die-after"
	// FaultHang ("hang-after=N") stops the whole process (SIGSTOP) at the Nth acquire.
	FaultHang = "hang-after"
	// FaultGarbage ("garbage-after=N") writes a line that is not the protocol at the Nth acquire.
	FaultGarbage = "garbage-after"
)

// WithFault returns lib with the fault (see the Fault constants) applied; "" returns lib.
func WithFault(lib Library, fault string) (Library, error) {
	if fault == "" {
		return lib, nil
	}
	if fault == FaultNoLock {
		return noLock{lib}, nil
	}
	kind, n, _ := strings.Cut(fault, "=")
	after, err := strconv.ParseInt(n, 10, 64)
	if err != nil || after < 1 || (kind != FaultDie && kind != FaultHang && kind != FaultGarbage) {
		return nil, fmt.Errorf("adapter: fault %q: want %s, %s=N, %s=N or %s=N", fault, FaultNoLock, FaultDie, FaultHang, FaultGarbage)
	}
	return &atNth{Library: lib, kind: kind, after: after}, nil
}

// noLock grants without locking, and releases whatever it is asked to.
type noLock struct{ Library }

func (noLock) Acquire(context.Context, string, string) error { return nil }
func (noLock) Release(context.Context, string, string) error { return nil }
func (n noLock) Hello() extdriver.Hello {
	h := basicKinds(n.Library.Hello())
	h.Library += " [fault: " + FaultNoLock + "]"
	return h
}

// basicKinds keeps mutex and reentrant of h's kinds: a fault wraps only Library's methods.
func basicKinds(h extdriver.Hello) extdriver.Hello {
	var kinds []string
	for _, k := range h.Kinds {
		if k == extdriver.KindMutex || k == extdriver.KindReentrant {
			kinds = append(kinds, k)
		}
	}
	h.Kinds = kinds
	return h
}

// atNth fails in its way at the after'th acquire.
type atNth struct {
	Library
	kind  string
	after int64
	n     atomic.Int64
}

func (f *atNth) Hello() extdriver.Hello { return basicKinds(f.Library.Hello()) }

func (f *atNth) Acquire(ctx context.Context, owner, name string) error {
	if f.n.Add(1) == f.after {
		switch f.kind {
		case FaultDie:
			fmt.Fprintf(os.Stderr, "adapter: fault %s=%d: exiting\n", FaultDie, f.after)
			os.Exit(3)
		case FaultHang:
			fmt.Fprintf(os.Stderr, "adapter: fault %s=%d: stopping\n", FaultHang, f.after)
			stopSelf()
		case FaultGarbage:
			fmt.Fprintf(os.Stderr, "adapter: fault %s=%d: writing garbage\n", FaultGarbage, f.after)
			os.Stdout.Write([]byte("\x00garbage, not a reply\n"))
		}
	}
	return f.Library.Acquire(ctx, owner, name)
}
