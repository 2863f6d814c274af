package resource

import (
	"errors"
	"testing"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/referee"
	"github.com/lockbench/lockbench/workloads"
	"github.com/redis/rueidis"
)

var _ workloads.Resource = (*Resource)(nil)

func open(t *testing.T, addr, kind, run, process string) *Resource {
	t.Helper()
	r, err := Open(t.Context(), Options{Kind: kind, Referee: referee.Options{Addr: addr, RunID: run, Process: process}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// TestWrites plays the writes of two holders of one lock, in two processes, on both kinds: a
// section alone is clean; a section another holder wrote into is corrupt when its end is
// accepted; a fenced resource rejects the lower token, and then nothing is corrupt; an equal
// token is the same grant's; writes without a token pass a fenced resource like a plain one.
func TestWrites(t *testing.T) {
	srv := redistest.NewServer(t)
	type write struct {
		proc   int // 0 or 1: which process writes
		worker int
		token  int64 // 0: no token
		end    bool
		want   int // accepted, corrupt or stale
	}
	for _, tc := range []struct {
		name, kind string
		writes     []write
	}{
		{"alone", Plain, []write{{0, 1, 0, false, accepted}, {0, 1, 0, true, accepted}, {1, 1, 0, false, accepted}, {1, 1, 0, true, accepted}}},
		{"plain overlap", Plain, []write{
			{0, 1, 5, false, accepted}, // p0/w1 starts, then sleeps past its lease
			{1, 1, 6, false, accepted}, // p1/w1, the next holder
			{1, 1, 6, true, accepted},
			{0, 1, 5, true, corrupt}, // p0/w1 wakes and ends its section over p1/w1's write
		}},
		{"fenced overlap", Fenced, []write{
			{0, 1, 5, false, accepted},
			{1, 1, 6, false, accepted},
			{0, 1, 5, true, stale}, // turned away: 6 was accepted
			{1, 1, 6, true, accepted},
		}},
		{"fenced, same grant", Fenced, []write{{0, 2, 7, false, accepted}, {0, 2, 7, true, accepted}}},
		{"fenced, late write before the next holder's first", Fenced, []write{
			{0, 1, 5, false, accepted},
			{0, 1, 5, true, accepted}, // late, but nothing fell inside its section
			{1, 1, 6, false, accepted},
			{1, 1, 6, true, accepted},
		}},
		{"fenced, token reused", Fenced, []write{ // a fail-over that lost the token counter
			{0, 1, 5, false, accepted},
			{1, 1, 5, false, accepted},
			{0, 1, 5, true, corrupt},
		}},
		{"fenced, no token", Fenced, []write{
			{0, 1, 0, false, accepted},
			{1, 1, 0, false, accepted},
			{0, 1, 0, true, corrupt},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			procs := []*Resource{open(t, srv.Addr(), tc.kind, tc.name, "p0@h:1"), open(t, srv.Addr(), tc.kind, tc.name, "p1@h:2")}
			var want [2][3]int64
			var tokens [2]int64
			for i, w := range tc.writes {
				p := procs[w.proc]
				before := *p.Result()
				p.Write(3, w.worker, w.token, w.token != 0, w.end)
				after := p.Result()
				got := accepted
				switch {
				case after.CorruptWrites > before.CorruptWrites:
					got = corrupt
				case after.StaleRejected > before.StaleRejected:
					got = stale
				}
				if got != w.want || after.Errors != 0 {
					t.Fatalf("write %d %+v: got %d (errors %d), want %d", i, w, got, after.Errors, w.want)
				}
				want[w.proc][w.want]++
				if w.token != 0 {
					tokens[w.proc]++
				}
			}
			for i, p := range procs {
				r := p.Result()
				if r.Kind != tc.kind || r.CorruptWrites != want[i][corrupt] || r.StaleRejected != want[i][stale] ||
					r.Writes != want[i][0]+want[i][1]+want[i][2] || r.TokenWrites != tokens[i] {
					t.Errorf("process %d: %+v, want %v and %d token writes", i, r, want[i], tokens[i])
				}
			}
			c, s, err := procs[0].RunCounts(t.Context())
			if err != nil || c != want[0][corrupt]+want[1][corrupt] || s != want[0][stale]+want[1][stale] {
				t.Errorf("run counts %d corrupt, %d stale (%v): want both processes'", c, s, err)
			}
			if err := procs[0].Clear(t.Context(), 10); err != nil {
				t.Fatal(err)
			}
			if c, s, _ := procs[0].RunCounts(t.Context()); c+s != 0 {
				t.Errorf("after Clear: %d corrupt, %d stale", c, s)
			}
		})
	}
	c := open(t, srv.Addr(), Plain, "x", "p").c
	if keys, err := c.Do(t.Context(), c.B().Keys().Pattern("lockbench:resource:*").Build()).AsStrSlice(); err != nil || len(keys) != 0 {
		t.Errorf("keys left after Clear: %v (%v)", keys, err)
	}
}

// TestBadInput: an unknown kind and an address the referee could not be reached by are
// refused before connecting; a resource that stops answering counts errors, never a hang.
func TestBadInput(t *testing.T) {
	if _, err := Open(t.Context(), Options{Kind: "fencd", Referee: referee.Options{Addr: "127.0.0.1:1"}}); !errors.Is(err, ErrBadInput) {
		t.Errorf("unknown kind: %v, want ErrBadInput", err)
	}
	if _, err := Open(t.Context(), Options{Kind: Plain, Referee: referee.Options{Addr: "nohost"}}); !errors.Is(err, referee.ErrBadInput) {
		t.Errorf("bad address: %v, want referee.ErrBadInput", err)
	}
	srv := redistest.NewServer(t)
	r := open(t, srv.Addr(), Fenced, "gone", "p0")
	stop := open(t, srv.Addr(), Plain, "gone", "x")
	_ = stop.c.Do(t.Context(), rueidis.Completed(stop.c.B().Shutdown().Nosave().Build())).Error()
	r.Write(1, 0, 1, true, false)
	if res := r.Result(); res.Errors != 1 || res.CorruptWrites+res.StaleRejected != 0 {
		t.Errorf("a write to a stopped resource: %+v, want 1 error", res)
	}
}
