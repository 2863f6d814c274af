package adapter

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/extdriver"
)

// WithDelay returns lib with every acquire and release answered d later, as a library whose
// every call waits on its server answers: the null adapter with -delay measures the pipe at a
// real library's latency, where its replies trickle back one by one instead of in the batches
// an instant reply makes (docs/external-drivers.md, the null row). The wait is a Go timer, as a
// library's is the network poller: either wakes a goroutine of the adapter per call. d <= 0
// returns lib. Only the mutex and reentrant kinds are kept: the delay wraps Library's methods.
func WithDelay(lib Library, d time.Duration) Library {
	if d <= 0 {
		return lib
	}
	return delayed{Library: lib, d: d}
}

// delayed answers d late; it is not Immediate, so Serve runs each call on a goroutine of its
// own, as it does a real library's.
type delayed struct {
	Library
	d time.Duration
}

func (l delayed) Acquire(ctx context.Context, owner, name string) error {
	if err := sleepCtx(ctx, l.d); err != nil {
		return err
	}
	return l.Library.Acquire(ctx, owner, name)
}

func (l delayed) Release(ctx context.Context, owner, name string) error {
	if err := sleepCtx(ctx, l.d); err != nil {
		return err
	}
	return l.Library.Release(ctx, owner, name)
}

func (l delayed) Hello() extdriver.Hello {
	h := basicKinds(l.Library.Hello())
	h.Library += " [delay: " + l.d.String() + "]"
	return h
}

// sleepCtx waits d, or less if ctx ends first (its error then).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
