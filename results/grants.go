package results

import (
	"sync/atomic"
	"time"
)

// MaxGrantMarks bounds the instants one GrantWatch follows: every grant checks each of them.
const MaxGrantMarks = 16

// GrantWatch finds, for each of up to MaxGrantMarks instants marked during a phase (the start
// of a fault, say), the earliest grant among the cycles that began at or after it: how long
// after a fault the lock service granted a lock again to someone who asked after the fault.
// Cycles already waiting when the fault started do not count, whenever they are granted. One
// GrantWatch is shared by every recorder of a phase (see Recorder.Watch). Its methods are safe
// for concurrent use and do not allocate.
type GrantWatch struct {
	base time.Time // monotonic origin of the stored offsets
	n    int
	// mark[i] and first[i] are offsets from base plus one, in nanoseconds; 0 means unset.
	mark  [MaxGrantMarks]atomic.Int64
	first [MaxGrantMarks]atomic.Int64
}

// NewGrantWatch returns a GrantWatch for n marks (clamped to 0..MaxGrantMarks).
func NewGrantWatch(n int) *GrantWatch {
	return &GrantWatch{base: time.Now(), n: max(0, min(n, MaxGrantMarks))}
}

// offset turns t into a stored offset: nanoseconds since base plus one, at least 1.
func (w *GrantWatch) offset(t time.Time) int64 { return max(int64(t.Sub(w.base)), 0) + 1 }

// Mark sets mark i to t; the first grant of a cycle begun at or after t is looked for from
// then on. Marks out of range are ignored; marking one twice keeps the later instant and
// forgets its earlier first grant.
func (w *GrantWatch) Mark(i int, t time.Time) {
	if i < 0 || i >= w.n {
		return
	}
	w.first[i].Store(0)
	w.mark[i].Store(w.offset(t))
}

// Granted reports a cycle that began at start and was granted its lock at acquired.
func (w *GrantWatch) Granted(start, acquired time.Time) {
	s, a := w.offset(start), w.offset(acquired)
	for i := range w.n {
		m := w.mark[i].Load()
		if m == 0 || s < m {
			continue
		}
		for {
			f := w.first[i].Load()
			if f != 0 && f <= a {
				break
			}
			if w.first[i].CompareAndSwap(f, a) {
				break
			}
		}
	}
}

// First returns the time from mark i to the first grant of a cycle begun at or after it, and
// false if mark i is unset or no such cycle was granted.
func (w *GrantWatch) First(i int) (time.Duration, bool) {
	if i < 0 || i >= w.n {
		return 0, false
	}
	m, f := w.mark[i].Load(), w.first[i].Load()
	if m == 0 || f == 0 {
		return 0, false
	}
	return time.Duration(f - m), true
}
