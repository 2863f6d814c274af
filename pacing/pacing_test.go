package pacing

import (
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		rate    float64
		arrival string
		ok      bool
	}{
		{1, "", true},
		{2000, Uniform, true},
		{0.5, Poisson, true},
		{MaxRate, Poisson, true},
		{0, Uniform, false},
		{-1, Uniform, false},
		{math.NaN(), Uniform, false},
		{math.Inf(1), Uniform, false},
		{MaxRate + 1, Uniform, false},
		{100, "gauss", false},
	}
	for _, c := range cases {
		err := Check(c.rate, c.arrival)
		if (err == nil) != c.ok {
			t.Errorf("Check(%v, %q) = %v, want ok=%v", c.rate, c.arrival, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrBadSchedule) {
			t.Errorf("Check(%v, %q): %v does not wrap ErrBadSchedule", c.rate, c.arrival, err)
		}
		if _, err := New(c.rate, c.arrival, 1); (err == nil) != c.ok {
			t.Errorf("New(%v, %q) = %v, want ok=%v", c.rate, c.arrival, err, c.ok)
		}
	}
}

// Uniform slots are exactly i/rate, even at a rate whose gap is not a whole number of
// nanoseconds and after a million slots: nothing accumulates.
func TestUniformIsExact(t *testing.T) {
	const rate = 3.0
	s, _ := New(rate, Uniform, 1)
	for i := range int64(1_000_000) {
		got := s.Next()
		want := time.Duration(float64(i) * 1e9 / rate)
		if got != want {
			t.Fatalf("slot %d at %v, want %v", i, got, want)
		}
	}
}

// The number of slots before d is rate*d, for every arrival process (Poisson on average).
func TestRates(t *testing.T) {
	for _, rate := range []float64{1, 7, 2000, 123_456} {
		for _, arrival := range []string{Uniform, Poisson} {
			s, _ := New(rate, arrival, 42)
			const d = 10 * time.Second
			var n int64
			for s.Next() < d {
				n++
			}
			want := rate * d.Seconds()
			tol := 1.0 // uniform: exact up to the slot at 0
			if arrival == Poisson {
				tol = 5 * math.Sqrt(want) // a Poisson count's sd is sqrt(mean)
			}
			if math.Abs(float64(n)-want) > tol {
				t.Errorf("%s at %v/s: %d slots in %v, want %v ± %.0f", arrival, rate, n, d, want, tol)
			}
		}
	}
}

// Poisson gaps have mean 1/rate and, unlike uniform ones, a standard deviation of 1/rate too.
func TestPoissonGaps(t *testing.T) {
	const rate, n = 5000.0, 200_000
	s, _ := New(rate, Poisson, 7)
	prev := s.Next()
	var sum, sum2 float64
	for range n {
		at := s.Next()
		if at < prev {
			t.Fatalf("slot at %v before the previous %v", at, prev)
		}
		g := (at - prev).Seconds()
		sum += g
		sum2 += g * g
		prev = at
	}
	mean := sum / n
	sd := math.Sqrt(sum2/n - mean*mean)
	// The mean of n exponential gaps has a relative sd of 1/sqrt(n) = 0.22%: 2% is far outside.
	if math.Abs(mean*rate-1) > 0.02 {
		t.Errorf("mean gap %v, want %v", mean, 1/rate)
	}
	if math.Abs(sd*rate-1) > 0.05 {
		t.Errorf("gap sd %v, want about the mean %v (exponential)", sd, 1/rate)
	}
}

// A seed fixes a Poisson schedule; another seed gives other times.
func TestPoissonSeed(t *testing.T) {
	take := func(seed int64) []time.Duration {
		s, _ := New(100, Poisson, seed)
		out := make([]time.Duration, 1000)
		for i := range out {
			out[i] = s.Next()
		}
		return out
	}
	if a, b := take(3), take(3); !slices.Equal(a, b) {
		t.Error("one seed gave two schedules")
	}
	if a, b := take(3), take(4); slices.Equal(a, b) {
		t.Error("seeds 3 and 4 gave the same schedule")
	}
}

// Workers sharing a schedule get every slot exactly once: together, the slots of one schedule
// taken alone.
func TestSharedSchedule(t *testing.T) {
	for _, arrival := range []string{Uniform, Poisson} {
		const workers, each = 8, 5000
		want := make([]time.Duration, workers*each)
		s, _ := New(1000, arrival, 9)
		for i := range want {
			want[i] = s.Next()
		}
		shared, _ := New(1000, arrival, 9)
		got := make([][]time.Duration, workers)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for range each {
					got[w] = append(got[w], shared.Next())
				}
			})
		}
		wg.Wait()
		all := slices.Concat(got...)
		slices.Sort(all)
		if !slices.Equal(all, want) {
			t.Errorf("%s: the workers' slots are not the schedule's", arrival)
		}
	}
}

// Skip hands out exactly the slots before its end, and Next goes on after them.
func TestSkip(t *testing.T) {
	for _, rate := range []float64{3, 1000, 999_983} {
		for _, arrival := range []string{Uniform, Poisson} {
			ref, _ := New(rate, arrival, 5)
			s, _ := New(rate, arrival, 5)
			for range 10 {
				ref.Next()
				s.Next()
			}
			end := 2500 * time.Millisecond
			var want int64
			var next time.Duration
			for {
				next = ref.Next()
				if next >= end {
					break
				}
				want++
			}
			if got := s.Skip(end); got != want {
				t.Errorf("%s at %v/s: Skip = %d, want %d", arrival, rate, got, want)
			}
			if got := s.Next(); got != next {
				t.Errorf("%s at %v/s: after Skip the next slot is %v, want %v", arrival, rate, got, next)
			}
			if got := s.Skip(end); got != 0 {
				t.Errorf("%s at %v/s: a second Skip to the same end handed out %d", arrival, rate, got)
			}
		}
	}
}
