package results

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// DefaultTimelineInterval is the length of a timeline point: one second, the
// resolution at which a fault's dip and recovery show.
const DefaultTimelineInterval = time.Second

// Timeline is a run's measured phase interval by interval: acquisitions,
// errors and acquire latency per second, and each interval's histogram, from
// which the HDR interval log is made. It is a plain value; it is not safe for
// concurrent modification.
type Timeline struct {
	// Start is when the measured phase began; the points' StartS count from it.
	Start time.Time `json:"start"`
	// IntervalS is the planned length of a point in seconds; the last point is shorter when
	// the phase did not end on an interval boundary.
	IntervalS float64         `json:"interval_s"`
	Points    []TimelinePoint `json:"points"`
}

// TimelinePoint is one interval of a Timeline. It is a plain value and safe
// for concurrent use.
type TimelinePoint struct {
	// StartS and DurationS place the interval, in seconds from Timeline.Start.
	StartS    float64 `json:"start_s"`
	DurationS float64 `json:"duration_s"`
	// Acquisitions counts the cycles that completed in the interval; ThroughputPerS is that
	// over DurationS.
	Acquisitions   int64   `json:"acquisitions"`
	ThroughputPerS float64 `json:"throughput_per_s"`
	// Errors counts the failed operations of the interval, all kinds together.
	Errors int64 `json:"errors"`
	// AcquireP50US, AcquireP99US and AcquireMaxUS are of the acquire latencies of the cycles
	// that completed in the interval; 0 when none did.
	AcquireP50US float64 `json:"acquire_p50_us"`
	AcquireP99US float64 `json:"acquire_p99_us"`
	AcquireMaxUS float64 `json:"acquire_max_us"`
	// Histogram is the interval's acquire latency histogram, encoded like Histograms.
	Histogram string `json:"histogram"`
}

// TimelineRecorder samples a phase's recorders every interval into a
// Timeline. Create it with NewTimelineRecorder before the recorders are
// used, Start it when the phase starts and Stop it after the recorders'
// workers have stopped. Its methods are safe for concurrent use with the
// recorders' Record and Error.
type TimelineRecorder struct {
	recs     []*Recorder
	interval time.Duration
	// spare is swapped into a recorder in exchange for its interval histogram, so a worker
	// waits for a pointer swap, never for a merge.
	spare *hdrhistogram.Histogram
	sum   *hdrhistogram.Histogram
	// With a live watcher (OnSample): the cycle histograms, swapped like the acquire ones,
	// and the errors by kind.
	onSample             func(Sample)
	cycleSpare, cycleSum *hdrhistogram.Histogram
	kinds                map[string]int64

	started time.Time // set by Start, with the monotonic clock reading

	mu       sync.Mutex // guards the fields below, shared by the ticker and Stop
	timeline Timeline
	last     time.Time
	encErr   error

	stop chan struct{}
	done chan struct{}
}

// NewTimelineRecorder returns a TimelineRecorder for the recorders, skipping
// nil ones, with points of length every (DefaultTimelineInterval if not
// positive). It prepares the recorders to be sampled, so it must be called
// before any of them records. It is not safe for concurrent use with the
// recorders.
func NewTimelineRecorder(recs []*Recorder, every time.Duration) *TimelineRecorder {
	if every <= 0 {
		every = DefaultTimelineInterval
	}
	t := &TimelineRecorder{interval: every, spare: newHistogram(), sum: newHistogram()}
	for _, r := range recs {
		if r == nil {
			continue
		}
		if r.interval == nil {
			r.interval = &interval{acquire: newHistogram()}
		}
		t.recs = append(t.recs, r)
	}
	return t
}

// Sample is one interval of a phase as a live watcher sees it (see OnSample). Its histograms
// and map are the TimelineRecorder's own, valid only during the call: merge or copy what is
// to be kept. It is not safe for concurrent use.
type Sample struct {
	// Elapsed is the time from the start of the phase to the end of the interval.
	Elapsed time.Duration
	// Acquire and Cycle are the interval's acquire and cycle latencies, in microseconds.
	Acquire, Cycle *hdrhistogram.Histogram
	// Errors counts the interval's failed operations by kind.
	Errors map[string]int64
	// Final is true for the last sample, taken by Stop once the workers have stopped.
	Final bool
}

// OnSample makes the recorder call fn with every interval it closes, from its sampling
// goroutine, then from Stop: a live watcher (a Prometheus endpoint, thresholds that stop the
// run) gets what the timeline gets, without touching the workers' hot path beyond the
// interval's lock they already take. It also makes the recorders keep each interval's cycle
// latencies and errors by kind, so call it before any of them records, and before Start. fn
// must return promptly and must not call the TimelineRecorder. It is not safe for concurrent
// use.
func (t *TimelineRecorder) OnSample(fn func(Sample)) {
	t.onSample = fn
	t.cycleSpare, t.cycleSum = newHistogram(), newHistogram()
	t.kinds = make(map[string]int64)
	for _, r := range t.recs {
		r.interval.cycle = newHistogram()
		r.interval.kinds = make(map[string]int64)
	}
}

// Start marks the start of the phase and samples every interval from then
// on, until Stop. Call it once.
func (t *TimelineRecorder) Start() {
	now := time.Now()
	t.timeline = Timeline{Start: now.UTC(), IntervalS: t.interval.Seconds(), Points: []TimelinePoint{}}
	t.last, t.started = now, now
	t.stop, t.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(t.done)
		tick := time.NewTicker(t.interval)
		defer tick.Stop()
		for {
			select {
			case <-t.stop:
				return
			case now := <-tick.C:
				t.sample(now, false)
			}
		}
	}()
}

// Started returns when Start marked the start of the phase (Timeline.Start, with the monotonic
// clock reading that Timeline.Start drops), so that events of the phase can be placed on the
// timeline. Call it after Start.
func (t *TimelineRecorder) Started() time.Time { return t.started }

// Stop ends the sampling, takes the last (partial) interval and returns the
// timeline. The recorders' workers must have stopped, so that every value
// they recorded is in a point: then the points add up to the merged
// recorders. The error is from encoding a histogram. Call it once, after
// Start.
func (t *TimelineRecorder) Stop() (*Timeline, error) {
	close(t.stop)
	<-t.done
	t.sample(time.Now(), true)
	t.mu.Lock()
	defer t.mu.Unlock()
	// A phase that ends just after a tick leaves an empty sliver of an interval: noise in a
	// plot. One with anything in it stays, so that the points add up to the run.
	if n := len(t.timeline.Points); n > 1 {
		last := t.timeline.Points[n-1]
		if last.Acquisitions == 0 && last.Errors == 0 && last.DurationS < t.timeline.IntervalS/2 {
			t.timeline.Points = t.timeline.Points[:n-1]
		}
	}
	tl := t.timeline
	return &tl, t.encErr
}

// sample closes the interval that ends at now; final is true for Stop's.
func (t *TimelineRecorder) sample(now time.Time, final bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sum.Reset()
	live := t.onSample != nil
	if live {
		t.cycleSum.Reset()
		clear(t.kinds)
	}
	var errs int64
	for _, r := range t.recs {
		iv := r.interval
		iv.mu.Lock()
		h := iv.acquire
		iv.acquire = t.spare
		errs += iv.errors
		iv.errors = 0
		var c *hdrhistogram.Histogram
		if live {
			c = iv.cycle
			iv.cycle = t.cycleSpare
			for k, n := range iv.kinds {
				t.kinds[k] += n
			}
			clear(iv.kinds)
		}
		iv.mu.Unlock()
		t.sum.Merge(h) // same geometry: nothing is dropped
		h.Reset()
		t.spare = h
		if c != nil {
			t.cycleSum.Merge(c)
			c.Reset()
			t.cycleSpare = c
		}
		// Let the workers run between two recorders: on a client placed on one CPU (GOMAXPROCS
		// 1) the merges and resets of 64 recorders held the only P for 3.3-9.1 ms once a
		// second (timed in an open loop at 20000/s), a stall of every worker; with a yield
		// per recorder the longest stretch was 285 µs, and the encoding below 0.3-1 ms.
		runtime.Gosched()
	}
	if live {
		t.onSample(Sample{Elapsed: now.Sub(t.started), Acquire: t.sum, Cycle: t.cycleSum, Errors: t.kinds, Final: final})
	}
	d := now.Sub(t.last)
	p := TimelinePoint{DurationS: d.Seconds(), Acquisitions: t.sum.TotalCount(), Errors: errs}
	// Points follow each other without gaps; durations come from the monotonic clock.
	if n := len(t.timeline.Points); n > 0 {
		p.StartS = t.timeline.Points[n-1].StartS + t.timeline.Points[n-1].DurationS
	}
	if d > 0 {
		p.ThroughputPerS = float64(p.Acquisitions) / d.Seconds()
	}
	if p.Acquisitions > 0 {
		p.AcquireP50US = float64(t.sum.ValueAtQuantile(50))
		p.AcquireP99US = float64(t.sum.ValueAtQuantile(99))
		p.AcquireMaxUS = float64(t.sum.Max())
	}
	var err error
	if p.Histogram, err = encode(t.sum); err != nil && t.encErr == nil {
		t.encErr = fmt.Errorf("encode timeline histogram: %w", err)
	}
	t.timeline.Points = append(t.timeline.Points, p)
	t.last = now
}

// Totals returns the acquisitions and errors of all points. It is safe for
// concurrent use.
func (tl *Timeline) Totals() (acquisitions, errors int64) {
	for _, p := range tl.Points {
		acquisitions += p.Acquisitions
		errors += p.Errors
	}
	return acquisitions, errors
}
