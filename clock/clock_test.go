package clock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn"
	"github.com/redis/rueidis"
)

func client(t *testing.T, addr string) rueidis.Client {
	t.Helper()
	s, err := conn.New(conn.Options{Addrs: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.SingleClient(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestSkewedWorkersStartTogether has three workers, one with a clock 10 s ahead and one 10 s
// behind (as other machines' could be), wait for one start time given in the server's clock.
// Each finds the skew in its offset, and they wake together: within far less than the skew,
// where waiting by their own clocks would have put them 10 s apart.
func TestSkewedWorkersStartTogether(t *testing.T) {
	srv := redistest.NewServer(t)
	const skew = 10 * time.Second
	ref, err := Measure(t.Context(), client(t, srv.Addr()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := ref.Now().Add(500 * time.Millisecond)
	skews := []time.Duration{0, skew, -skew}
	woke := make([]time.Time, len(skews))
	ests := make([]Estimate, len(skews))
	var wg sync.WaitGroup
	for i, s := range skews {
		wg.Add(1)
		go func() {
			defer wg.Done()
			skewed := func() time.Time { return time.Now().Add(s) }
			e, err := Measure(context.Background(), client(t, srv.Addr()), Options{Now: skewed})
			if err != nil {
				t.Error(err)
				return
			}
			ests[i] = e
			time.Sleep(time.Until(e.Local(start)))
			woke[i] = time.Now()
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, s := range skews {
		// The offset absorbs the skew: it is right to within half a round trip.
		if d := (ests[i].Offset + s - ref.Offset).Abs(); d > skew/10 {
			t.Errorf("worker %d, clock %v off: offset %v, the unskewed one %v", i, s, ests[i].Offset, ref.Offset)
		}
		if d := woke[i].Sub(woke[0]).Abs(); d > skew/2 {
			t.Errorf("worker %d, clock %v off, woke %v from worker 0: the skew was not taken out", i, s, d)
		}
		t.Logf("clock %+v: offset %v, rtt %v, woke %v after worker 0", s, ests[i].Offset, ests[i].RTT, woke[i].Sub(woke[0]))
	}
}

func TestServerAndLocalAreInverse(t *testing.T) {
	e := Estimate{Offset: 1234 * time.Millisecond, localAhead: -5 * time.Second}
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	if got := e.Local(e.Server(at)); !got.Equal(at) {
		t.Errorf("Local(Server(%v)) = %v", at, got)
	}
	if got := e.Server(at).Sub(at); got != 1234*time.Millisecond-5*time.Second {
		t.Errorf("Server adds %v, want the offset and the local clock's lead", got)
	}
}

func TestNoTime(t *testing.T) {
	srv := redistest.NewServer(t, "--rename-command", "TIME", "")
	if _, err := Measure(t.Context(), client(t, srv.Addr()), Options{}); !errors.Is(err, ErrNoTime) {
		t.Errorf("a server without TIME: %v, want ErrNoTime", err)
	}
	for _, reply := range [][]string{nil, {"1"}, {"x", "1"}, {"1", "1000000"}} {
		if _, err := parseTime(reply); !errors.Is(err, ErrNoTime) {
			t.Errorf("reply %q: %v, want ErrNoTime", reply, err)
		}
	}
}
