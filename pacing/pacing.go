// Package pacing makes the arrival schedule of an open loop: the intended start times of lock
// attempts at a target rate, evenly spaced (uniform) or as a Poisson process (exponential gaps,
// seeded). An open loop starts each attempt at its intended time whether or not earlier ones have
// finished, and measures latency from that time, so a stalled server shows as the wait of every
// attempt that arrived during the stall (coordinated-omission correction, as wrk2 does).
//
// One Schedule serves every worker of a phase: a free worker takes the next slot. That keeps the
// intended times exactly those of one process at the target rate, whichever workers are free:
// with per-worker schedules of rate/N instead, a slot would wait for one particular worker, so a
// worker stuck on a slow call would fall behind while others idle, and N uniform schedules would
// also have to be phase-shifted to add up to one even stream.
package pacing

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Arrival processes.
const (
	// Uniform spaces slots exactly 1/rate apart, the first at offset 0.
	Uniform = "uniform"
	// Poisson draws the gaps between slots from an exponential distribution of mean 1/rate,
	// seeded: arrivals of many independent clients.
	Poisson = "poisson"
	// DefaultArrival is the arrival process when none is named.
	DefaultArrival = Uniform
)

// MaxRate bounds the target rate, in slots per second: a 100 ns gap is already below what one
// process can start, and the bound keeps offsets far from overflowing.
const MaxRate = 10_000_000

// ErrBadSchedule wraps every invalid rate or arrival process.
var ErrBadSchedule = errors.New("bad arrival schedule")

// Check reports whether rate and arrival make a schedule: rate in (0, MaxRate], arrival Uniform,
// Poisson or "" (DefaultArrival). The error wraps ErrBadSchedule. It is safe for concurrent use.
func Check(rate float64, arrival string) error {
	if !(rate > 0 && rate <= MaxRate) { // NaN too
		return fmt.Errorf("%w: rate %v: want more than 0 and at most %d per second", ErrBadSchedule, rate, MaxRate)
	}
	switch arrival {
	case "", Uniform, Poisson:
		return nil
	}
	return fmt.Errorf("%w: arrival %q: want %s or %s", ErrBadSchedule, arrival, Uniform, Poisson)
}

// Schedule hands out the slots of one phase in order of intended start. It is safe for
// concurrent use: each slot goes to exactly one caller of Next.
type Schedule struct {
	rate float64
	// Uniform: n counts the slots handed out; slot i is at i/rate, computed from i, never
	// summed, so offsets do not drift however many slots a phase has.
	n atomic.Int64
	// Poisson: at is the next slot's offset in nanoseconds, the running sum of the gaps drawn
	// from rng; mu serialises the draws, so a seed gives one sequence of times whichever
	// callers take them. A float64 sum keeps its error below a nanosecond for 1e9 slots.
	poisson bool
	mu      sync.Mutex
	rng     *rand.Rand
	at      float64
}

// New returns the schedule of a phase at rate slots per second; seed fixes a Poisson schedule's
// times. The error wraps ErrBadSchedule (see Check).
func New(rate float64, arrival string, seed int64) (*Schedule, error) {
	if err := Check(rate, arrival); err != nil {
		return nil, err
	}
	s := &Schedule{rate: rate}
	if arrival == Poisson {
		s.poisson = true
		s.rng = rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
		s.at = s.gap()
	}
	return s, nil
}

// Rate is the schedule's slots per second.
func (s *Schedule) Rate() float64 { return s.rate }

// Next hands out the next slot: its intended start, as an offset from the phase's start.
// Successive slots never go back in time.
func (s *Schedule) Next() time.Duration {
	if !s.poisson {
		return offset(float64(s.n.Add(1)-1) * 1e9 / s.rate)
	}
	s.mu.Lock()
	at := s.at
	s.at += s.gap()
	s.mu.Unlock()
	return offset(at)
}

// Skip hands out every slot before the offset end and returns how many there were. A uniform
// schedule counts them in constant time; a Poisson one draws them, in time proportional to
// their number.
func (s *Schedule) Skip(end time.Duration) int64 {
	if !s.poisson {
		// Slots i with i*1e9/rate < end: i < end*rate/1e9. The loop fixes the last
		// float rounding of the estimate in either direction.
		for {
			n := s.n.Load()
			due := int64(math.Ceil(float64(end) * s.rate / 1e9))
			for due > 0 && offset(float64(due-1)*1e9/s.rate) >= end {
				due--
			}
			for offset(float64(due)*1e9/s.rate) < end {
				due++
			}
			if due <= n {
				return 0
			}
			if s.n.CompareAndSwap(n, due) {
				return due - n
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for offset(s.at) < end {
		s.at += s.gap()
		n++
	}
	return n
}

// gap draws one exponential gap in nanoseconds; the caller holds mu.
func (s *Schedule) gap() float64 { return s.rng.ExpFloat64() * 1e9 / s.rate }

// offset converts nanoseconds to a Duration, saturating rather than overflowing.
func offset(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}
