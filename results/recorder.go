package results

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds. Latencies are recorded in whole microseconds; anything
// outside the range is clamped rather than dropped so that histogram counts
// always equal the number of acquisitions.
const (
	// MinLatencyUS is the lowest recorded latency in microseconds; shorter
	// durations, including zero and negative ones, record as MinLatencyUS.
	MinLatencyUS = 1
	// MaxLatencyUS is the highest recorded latency in microseconds (60 s);
	// longer durations record as MaxLatencyUS.
	MaxLatencyUS = 60_000_000
	// SigFigs is the number of significant decimal digits the histograms keep,
	// so a recorded value is accurate to within 0.1%.
	SigFigs = 3
)

// Recorder collects one worker's measurements. It is not safe for concurrent
// use: give each worker its own, so recording takes no shared lock, and
// combine them with Merge once the workers have stopped. A Timeline may
// sample it while it records. Create it with NewRecorder; it
// preallocates three histograms, about 420 KB in all.
type Recorder struct {
	acquire, release, cycle *hdrhistogram.Histogram
	errors                  map[string]int64
	// samples keeps the first MaxErrorSamples distinct messages of each error kind (see ErrorWith).
	samples map[string][]string
	// service and lag serve an open loop (see NewOpenLoopRecorder): nil and 0 otherwise.
	service *hdrhistogram.Histogram
	lag     time.Duration
	// startLag is an open loop's start lag of the attempts that a free worker took on time
	// (see ScheduleLag): how late the generator itself woke; nil otherwise.
	startLag *hdrhistogram.Histogram
	// interval is what was recorded since a Timeline last sampled this recorder; nil when no
	// Timeline samples it. Set before the recorder is used, never changed after.
	interval *interval
	// grants, if set (see Watch), is told of every grant; set before use, never changed after.
	grants *GrantWatch
}

// interval is one recorder's share of the current timeline interval. Its mutex is taken once
// per record by the worker and once per interval by the Timeline, which only swaps the
// histogram out: uncontended but for that instant, so it costs the hot path two atomic
// operations, far below the round trip every cycle makes.
type interval struct {
	mu      sync.Mutex
	acquire *hdrhistogram.Histogram
	errors  int64
	// cycle and kinds are kept only for a live watcher (TimelineRecorder.OnSample): nil
	// otherwise, so that a run nobody watches pays nothing for them.
	cycle *hdrhistogram.Histogram
	kinds map[string]int64
}

// NewRecorder returns an empty Recorder. It is safe for concurrent use.
func NewRecorder() *Recorder {
	return &Recorder{
		acquire: newHistogram(),
		release: newHistogram(),
		cycle:   newHistogram(),
		errors:  make(map[string]int64),
	}
}

// Record records one successful acquisition cycle: the acquire latency, the
// release latency and the whole cycle from acquire start to release end. It
// does not allocate. It is not safe for concurrent use, except with the
// Timeline that samples the recorder.
func (r *Recorder) Record(acquire, release, cycle time.Duration) {
	// The values are clamped into range, so RecordValue cannot fail.
	a := micros(acquire)
	if r.service != nil {
		_ = r.service.RecordValue(a)
		a = micros(acquire + r.lag)
	}
	_ = r.acquire.RecordValue(a)
	_ = r.release.RecordValue(micros(release))
	_ = r.cycle.RecordValue(micros(cycle))
	if iv := r.interval; iv != nil {
		iv.mu.Lock()
		_ = iv.acquire.RecordValue(a)
		if iv.cycle != nil {
			_ = iv.cycle.RecordValue(micros(cycle))
		}
		iv.mu.Unlock()
	}
}

// Watch makes the recorder report every grant to w (see Granted). Call it before the recorder
// is used. It is not safe for concurrent use.
func (r *Recorder) Watch(w *GrantWatch) { r.grants = w }

// Granted reports that a cycle begun at start was granted its lock at acquired, to the
// GrantWatch the recorder reports to, if any; whether the release then succeeds does not
// matter. It does not allocate. It is not safe for concurrent use.
func (r *Recorder) Granted(start, acquired time.Time) {
	if r.grants != nil {
		r.grants.Granted(start, acquired)
	}
}

// Error counts one failed operation of the given kind, such as "acquire",
// "release", "timeout" or "not_held". Losing a lock race is not an error and
// is not counted here. It is not safe for concurrent use.
func (r *Recorder) Error(kind string) {
	r.errors[kind]++
	if iv := r.interval; iv != nil {
		iv.mu.Lock()
		iv.errors++
		if iv.kinds != nil {
			iv.kinds[kind]++
		}
		iv.mu.Unlock()
	}
}

// ErrorWith counts one failed operation of kind, as Error does, and keeps err's message among
// the kind's first MaxErrorSamples distinct ones, so a result says why ("ERR max number of
// clients reached"), not only how often. err may be nil. It allocates only while a kind has
// fewer than MaxErrorSamples messages. It is not safe for concurrent use.
func (r *Recorder) ErrorWith(kind string, err error) {
	r.Error(kind)
	if err != nil && len(r.samples[kind]) < MaxErrorSamples {
		r.samples = addSample(r.samples, kind, err.Error())
	}
}

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(MinLatencyUS, MaxLatencyUS, SigFigs)
}

// micros converts d to microseconds, rounded to the nearest and clamped to the
// histogram bounds.
func micros(d time.Duration) int64 {
	switch {
	case d < MinLatencyUS*time.Microsecond:
		return MinLatencyUS
	case d >= MaxLatencyUS*time.Microsecond:
		return MaxLatencyUS
	}
	return int64((d + time.Microsecond/2) / time.Microsecond)
}
