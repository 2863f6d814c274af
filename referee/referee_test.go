package referee

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn"
	"github.com/redis/rueidis"
)

func open(t *testing.T, addr, run, process string) *Referee {
	t.Helper()
	r, err := Open(t.Context(), Options{Addr: addr, RunID: run, Process: process})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// TestTwoHoldersAreNamed has two processes mark locks on one referee: two holders of one lock
// are a violation that names both, readers share, a writer beside a reader is one, and a
// holder's exit clears its own mark only.
func TestTwoHoldersAreNamed(t *testing.T) {
	srv := redistest.NewServer(t)
	a, b := open(t, srv.Addr(), "run1", "p0@h:1"), open(t, srv.Addr(), "run1", "p1@h:2")
	a.Enter(3, 0, false)
	b.Enter(3, 1, false) // a second holder of lock 3
	b.Exit(3, 1)
	a.Exit(3, 0)
	a.Enter(3, 0, false) // alone again
	a.Exit(3, 0)
	a.Enter(5, 0, true)
	b.Enter(5, 1, true) // readers share
	b.Enter(5, 2, false)
	b.Exit(5, 2)
	a.Exit(5, 0)
	b.Exit(5, 1)
	b.Enter(7, 1, false)
	a.Exit(7, 1) // p0/w1 holds nothing: p1/w1's mark stays
	a.Enter(7, 0, false)

	ra, rb := a.Result(), b.Result()
	if ra.Violations != 1 || rb.Violations != 2 || ra.Errors+rb.Errors != 0 {
		t.Fatalf("violations %d and %d, errors %d and %d: want 1 (lock 7) and 2 (locks 3 and 5), no errors", ra.Violations, rb.Violations, ra.Errors, rb.Errors)
	}
	if want := "lock 3: p0@h:1/w0 and p1@h:2/w1"; rb.Examples[0] != want {
		t.Errorf("example %q, want %q", rb.Examples[0], want)
	}
	if want := "lock 7: p1@h:2/w1 and p0@h:1/w0"; ra.Examples[0] != want {
		t.Errorf("example %q, want %q", ra.Examples[0], want)
	}
	n, ex, err := a.RunViolations(t.Context())
	if err != nil || n != 3 || len(ex) != 3 || !strings.Contains(ex[1], "p0@h:1/w0 and p1@h:2/w2") {
		t.Errorf("run count %d %q (%v): want the 3 of both processes, named", n, ex, err)
	}
	// Another run's marks are its own.
	c := open(t, srv.Addr(), "run2", "p0@h:3")
	c.Enter(3, 0, false)
	if c.Result().Violations != 0 {
		t.Error("a holder of another run counted as a second holder")
	}
	if err := a.Clear(t.Context(), 10); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := a.RunViolations(t.Context()); n != 0 {
		t.Errorf("after Clear, %d violations", n)
	}
	if keys, err := a.c.Do(t.Context(), a.c.B().Keys().Pattern("lockbench:referee:{run1}*").Build()).AsStrSlice(); err != nil || len(keys) != 0 {
		t.Errorf("after Clear, run1 keys %v (%v)", keys, err)
	}
}

func TestRefusesTheRedisUnderTest(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "r.sock")
	srv := redistest.NewServer(t, "--unixsocket", sock)
	other := redistest.NewServer(t)
	s, err := conn.New(conn.Options{Addrs: []string{srv.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	dataClient, err := s.SingleClient(0)
	if err != nil {
		t.Fatal(err)
	}
	defer dataClient.Close()
	nodes := []Node{{Addr: srv.Addr(), Client: dataClient}}
	_, port, _ := strings.Cut(srv.Addr(), ":")
	for _, addr := range []string{
		srv.Addr(),                  // the same address
		"localhost:" + port,         // another name for it
		"unix://" + sock,            // the same server another way: its run_id tells
		"redis://127.0.0.1:" + port, // a URL
	} {
		r := open(t, addr, "x", "p")
		if err := r.CheckApart(t.Context(), nodes); !errors.Is(err, ErrUnderTest) {
			t.Errorf("referee %s, node %s: %v, want ErrUnderTest", addr, srv.Addr(), err)
		}
	}
	if err := open(t, other.Addr(), "x", "p").CheckApart(t.Context(), nodes); err != nil {
		t.Errorf("a separate referee refused: %v", err)
	}
	if _, err := Open(t.Context(), Options{Addr: "nohost"}); !errors.Is(err, ErrBadInput) {
		t.Errorf("a bad address: %v, want ErrBadInput", err)
	}
}

// TestUnansweredMarksAreErrors: a referee that stops answering costs each mark at most
// CallTimeout and counts errors, never a hang or a violation.
func TestUnansweredMarksAreErrors(t *testing.T) {
	srv := redistest.NewServer(t)
	r := open(t, srv.Addr(), "gone", "p0")
	stop := open(t, srv.Addr(), "gone", "x")
	_ = stop.c.Do(t.Context(), rueidis.Completed(stop.c.B().Shutdown().Nosave().Build())).Error()
	r.Enter(1, 0, false)
	r.Exit(1, 0)
	if res := r.Result(); res.Errors != 2 || res.Violations != 0 {
		t.Errorf("marks on a stopped referee: %+v, want 2 errors and no violation", res)
	}
}
