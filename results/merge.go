package results

import "github.com/HdrHistogram/hdrhistogram-go"

// Stats is the merged measurement of many recorders: latency histograms in
// microseconds (bounded by MinLatencyUS and MaxLatencyUS), the number of
// acquisition cycles, and failed operations by kind. It is safe for concurrent
// reads; nothing in this package modifies a Stats after Merge returns it.
type Stats struct {
	Acquire, Release, Cycle *hdrhistogram.Histogram
	Acquisitions            int64
	Errors                  map[string]int64
	// ErrorSamples keeps up to MaxErrorSamples distinct messages per error kind; nil when no
	// recorder kept one.
	ErrorSamples map[string][]string

	// Service is the open loop's acquire latency from the actual start (see
	// NewOpenLoopRecorder); nil when no recorder kept one.
	Service *hdrhistogram.Histogram
	// StartLag is the open loop's start lag of on-time attempts (see Recorder.ScheduleLag); nil
	// when no recorder kept one.
	StartLag *hdrhistogram.Histogram
}

// Merge combines recorders into one Stats, skipping nil ones; with none it
// returns empty, non-nil histograms and an empty error map. The recorders are
// only read. It is safe for concurrent use provided none of rs is recording.
func Merge(rs ...*Recorder) *Stats {
	s := &Stats{
		Acquire: newHistogram(),
		Release: newHistogram(),
		Cycle:   newHistogram(),
		Errors:  make(map[string]int64),
	}
	for _, r := range rs {
		if r == nil {
			continue
		}
		// Same geometry on both sides, so nothing can be dropped.
		s.Acquire.Merge(r.acquire)
		s.Release.Merge(r.release)
		s.Cycle.Merge(r.cycle)
		if r.service != nil {
			if s.Service == nil {
				s.Service = newHistogram()
			}
			s.Service.Merge(r.service)
		}
		if r.startLag != nil {
			if s.StartLag == nil {
				s.StartLag = newHistogram()
			}
			s.StartLag.Merge(r.startLag)
		}
		for kind, n := range r.errors {
			s.Errors[kind] += n
		}
		s.ErrorSamples = mergeSamples(s.ErrorSamples, r.samples)
	}
	s.Acquisitions = s.Cycle.TotalCount()
	return s
}

// ErrorCount returns the number of failed operations of all kinds. It is safe
// for concurrent use.
func (s *Stats) ErrorCount() int64 {
	var n int64
	for _, c := range s.Errors {
		n += c
	}
	return n
}
