package target

import (
	"context"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/clock"
)

// ClockNode returns the node whose TIME every process of a run reads: the first master by
// address, the same for every process attached to one deployment. ok is false without a
// master.
func (t *Target) ClockNode() (n Node, ok bool) {
	ms := t.Masters()
	if len(ms) == 0 {
		return Node{}, false
	}
	return slices.MinFunc(ms, func(a, b Node) int { return strings.Compare(a.Addr, b.Addr) }), true
}

// MeasureClock estimates this process's offset from the deployment's clock, ClockNode's TIME
// (see package clock), and returns the node's address. Without a master the error is
// ErrNoMaster; a failure's text carries no credentials.
func (t *Target) MeasureClock(ctx context.Context, opt clock.Options) (est clock.Estimate, addr string, err error) {
	n, ok := t.ClockNode()
	if !ok {
		return est, "", ErrNoMaster
	}
	est, err = clock.Measure(ctx, n.Client, opt)
	if err != nil {
		return est, "", redacted{t.conn.Redact(err.Error()), err}
	}
	return est, n.Addr, nil
}

// redacted is an error whose text had its credentials removed; it still wraps its cause.
type redacted struct {
	text string
	err  error
}

func (e redacted) Error() string { return e.text }
func (e redacted) Unwrap() error { return e.err }
