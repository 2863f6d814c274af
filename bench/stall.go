package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
)

// Stalls (issue 36): a server that stops answering mid-phase (SIGSTOP, a wedged disk, a long
// fork) made a run that read as healthy: the workers' calls hang, nothing fails, and the
// acquisitions before the stall carry the throughput. lockbench run pings every master through
// its own inspection connection while each run is under way, and a measured phase during which
// a master left a PING unanswered for longer than Spec.StallThreshold is marked in the result
// (results.Run.ServerStall) and fails the run, unless Spec.AllowStalls. Under lockbench's own
// faults the stall is what the fault does (a pause, a kill, a partition): reported, not a
// failure.

// DefaultStallThreshold is the Spec.StallThreshold lockbench run and sweep give by default
// (--stall-threshold): far above any healthy PING (well under a millisecond on a LAN), above the
// second for which a heavily loaded machine was seen to deschedule a process (a CI runner shared
// by several test binaries), and the drivers' reply timeout (drivers.ReplyTimeout): a longer
// stall also fails calls as timeouts, a shorter one fails none and is seen only here.
const DefaultStallThreshold = 2 * time.Second

// stallPingEvery is how often each master is pinged: the resolution of a stall's length.
const stallPingEvery = 100 * time.Millisecond

// stallWatch pings the masters while a run is under way and keeps, per master, the spans in
// which its PING went unanswered.
type stallWatch struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	spans  []stallSpan
	// waiting is, per master, when its oldest unanswered PING was sent; zero: none is.
	waiting map[string]time.Time
}

// stallSpan is a time a master left a PING unanswered, from its sending to the answer (or to the
// end of the watch).
type stallSpan struct {
	addr       string
	from, till time.Time
}

// watchStalls starts pinging the masters every stallPingEvery; stop ends it. With a zero
// threshold it watches nothing.
func watchStalls(ctx context.Context, t *target.Target, threshold time.Duration) *stallWatch {
	w := &stallWatch{waiting: map[string]time.Time{}}
	ctx, w.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if threshold <= 0 {
		return w
	}
	for _, n := range t.Masters() {
		w.wg.Go(func() { w.ping(ctx, n) })
	}
	return w
}

// ping sends PING to n until ctx ends, one at a time: a reply that took longer than the interval
// is a span; a failed PING (the connection's own timeout) keeps the span open.
func (w *stallWatch) ping(ctx context.Context, n target.Node) {
	tick := time.NewTicker(stallPingEvery)
	defer tick.Stop()
	var since time.Time // the oldest unanswered PING's sending
	for {
		sent := time.Now()
		if since.IsZero() {
			since = sent
		}
		w.mu.Lock()
		w.waiting[n.Addr] = since
		w.mu.Unlock()
		err := n.Client.Do(ctx, n.Client.B().Ping().Build()).Error()
		now := time.Now()
		if ctx.Err() != nil {
			w.add(n.Addr, since, now)
			return
		}
		if err == nil {
			w.add(n.Addr, since, now)
			since = time.Time{}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// add keeps a span longer than the ping interval, and marks the master answered.
func (w *stallWatch) add(addr string, from, till time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.waiting, addr)
	if till.Sub(from) > stallPingEvery {
		w.spans = append(w.spans, stallSpan{addr: addr, from: from, till: till})
	}
}

// stop ends the watch and waits for its pings; spans still open end now.
func (w *stallWatch) stop() {
	w.cancel()
	w.wg.Wait()
}

// silentNow returns a master that has not answered a PING for at least d, and since when; ""
// when every master answers.
func (w *stallWatch) silentNow(d time.Duration) (string, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for addr, since := range w.waiting {
		if time.Since(since) >= d {
			return addr, since
		}
	}
	return "", time.Time{}
}

// longest returns the longest span's part inside the measured phase [start, start+d), as a
// results.ServerStall, or nil when none reaches threshold.
func (w *stallWatch) longest(start time.Time, d, threshold time.Duration) *results.ServerStall {
	if threshold <= 0 || start.IsZero() {
		return nil
	}
	start = start.Round(0) // the timeline's wall-clock start; compare on the wall clock
	end := start.Add(d)
	w.mu.Lock()
	defer w.mu.Unlock()
	var best *results.ServerStall
	for _, s := range w.spans {
		from, till := s.from.Round(0), s.till.Round(0)
		if from.Before(start) {
			from = start
		}
		if till.After(end) {
			till = end
		}
		if l := till.Sub(from); l >= threshold && (best == nil || l.Seconds() > best.LongestS) {
			best = &results.ServerStall{Addr: s.addr, AtS: from.Sub(start).Seconds(), LongestS: l.Seconds(), ThresholdS: threshold.Seconds()}
		}
	}
	return best
}

// checkStall records the phase's longest stall in run and fails the run for it, unless
// Spec.AllowStalls or the run had lockbench's own faults (which stall the server on purpose).
func (s *Session) checkStall(name string, run *results.Run, w *stallWatch, o *Outcome) {
	if run.Timeline == nil {
		return
	}
	st := w.longest(run.Timeline.Start, time.Duration(run.DurationS*float64(time.Second)), s.spec.StallThreshold)
	if st == nil {
		return
	}
	run.ServerStall = st
	what := fmt.Sprintf("%s did not answer for %.1fs from %.1fs into the measured phase (--stall-threshold %v): the figures of this run include a stalled server",
		st.Addr, st.LongestS, st.AtS, s.spec.StallThreshold)
	switch {
	case len(run.Faults) > 0:
		s.rep.Line("lockbench run: %s: stall under faults: %s", name, what)
	case s.spec.AllowStalls:
		s.rep.Line("lockbench run: %s: stall allowed by --allow-stalls: %s", name, what)
	default:
		s.failRun(o, run, name, "STALL: "+what)
	}
}

// errServerSilent is a post-run read skipped because a master is not answering.
var errServerSilent = errors.New("skipped: a master is not answering (stall)")

// guard returns read, failing at once instead while a master has left a PING unanswered for the
// threshold or longer.
func (w *stallWatch) guard(threshold time.Duration, read func(context.Context) (results.ServerStats, error)) func(context.Context) (results.ServerStats, error) {
	return func(ctx context.Context) (results.ServerStats, error) {
		if addr, _ := w.silentNow(threshold); addr != "" {
			return nil, fmt.Errorf("%s: %w", addr, errServerSilent)
		}
		return read(ctx)
	}
}
