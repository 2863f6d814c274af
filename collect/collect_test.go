package collect

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/results"
)

// realResult is the result file of one real lockbench worker run (testdata, written by
// lockbench worker against a private redis-server), made process index of procs of run runID.
func realResult(t testing.TB, runID string, index, procs int) *results.File {
	t.Helper()
	f, err := results.ReadFile("testdata/worker-result.json")
	if err != nil {
		t.Fatal(err)
	}
	r := &f.Runs[0]
	r.Fleet.Procs = procs
	r.Fleet.RunID = runID
	r.Fleet.Processes[0].Index = index
	return f
}

// wideResult is a result whose histograms hold many distinct values, so that their encoding is
// large and its JSON spans many chunks.
func wideResult(t *testing.T, runID string, index, procs int) *results.File {
	t.Helper()
	f := realResult(t, runID, index, procs)
	rec := results.NewRecorder()
	for i := range 200000 {
		d := time.Duration(1+i*997%5_000_000) * time.Microsecond / 10
		rec.Record(d, d, d)
	}
	r := &f.Runs[0]
	if err := r.Fill(results.Merge(rec), 2*time.Second); err != nil {
		t.Fatal(err)
	}
	r.Timeline = nil
	r.SetProcess(index, procs, r.Fleet.StartAt, "host", 1, false)
	r.Fleet.RunID = runID
	return f
}

func openStore(t *testing.T, opt Options) *Store {
	t.Helper()
	s, err := Open(t.Context(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestPutFetchLargeResultsIntact(t *testing.T) {
	srv := redistest.NewServer(t)
	opt := Options{Addr: "redis://" + srv.Addr(), ChunkSize: 1024, TTL: time.Hour}
	s := openStore(t, opt)
	const run = "intact"
	var want int64
	var puts []*results.File
	for i := range 3 {
		f := wideResult(t, run, i, 3)
		puts = append(puts, f)
		want += f.Runs[0].Acquisitions
		if err := s.Put(t.Context(), run, i, 3, f); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := s.List(t.Context(), run)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 3 || stored[0].meta.Chunks < 10 {
		t.Fatalf("stored %+v: want 3 results of many chunks each", stored)
	}
	// Each stored result comes back byte for byte: its encoded histograms are the ones put.
	for i, st := range stored {
		got, err := s.Get(t.Context(), run, st)
		if err != nil {
			t.Fatal(err)
		}
		if got.Runs[0].Histograms != puts[i].Runs[0].Histograms {
			t.Errorf("process %d: histograms changed on the way", i)
		}
	}
	ttl, err := s.c.Do(t.Context(), s.c.B().Pttl().Key(runKey(run, "r:"+stored[0].entry)).Build()).AsInt64()
	if err != nil || ttl <= 0 || ttl > time.Hour.Milliseconds() {
		t.Errorf("stored result's PTTL %d (%v): want the store's expiry", ttl, err)
	}
	f, err := Fetch(t.Context(), opt, run, 3, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	m := f.Runs[0]
	a, _, _, err := m.Histograms.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if m.Acquisitions != want || a.TotalCount() != want || len(m.Fleet.Processes) != 3 || !m.Complete || m.Fleet.RunID != run {
		t.Errorf("merged %d acquisitions (histogram %d), %d processes, complete %v, run %q; want %d, 3, true, %q",
			m.Acquisitions, a.TotalCount(), len(m.Fleet.Processes), m.Complete, m.Fleet.RunID, want, run)
	}
}

func TestFetchRefusesWhatIsNotOneRun(t *testing.T) {
	srv := redistest.NewServer(t)
	opt := Options{Addr: srv.Addr()}
	s := openStore(t, opt)
	put := func(run string, index, procs int, f *results.File) {
		t.Helper()
		if err := s.Put(t.Context(), run, index, procs, f); err != nil {
			t.Fatal(err)
		}
	}
	// Each case stores under its own run id what its workers wrote, then fetches 3 processes.
	cases := []struct {
		name  string
		store func(run string)
		want  error
		names string // what the message must say
	}{
		{"duplicate", func(run string) {
			put(run, 0, 3, realResult(t, run, 0, 3))
			put(run, 1, 3, realResult(t, run, 1, 3))
			put(run, 1, 3, realResult(t, run, 1, 3))
			put(run, 2, 3, realResult(t, run, 2, 3))
		}, ErrDuplicate, "process 1"},
		{"other process count", func(run string) {
			put(run, 0, 3, realResult(t, run, 0, 3))
			put(run, 3, 4, realResult(t, run, 3, 4))
		}, ErrForeign, "process 3"},
		{"other run id inside", func(run string) {
			put(run, 0, 3, realResult(t, run, 0, 3))
			put(run, 1, 3, realResult(t, "another", 1, 3))
			put(run, 2, 3, realResult(t, run, 2, 3))
		}, ErrForeign, "process 1"},
		{"other version", func(run string) {
			put(run, 0, 3, realResult(t, run, 0, 3))
			f := realResult(t, run, 1, 3)
			f.Runs[0].Fleet.Processes[0].Version = "v9.9.9"
			put(run, 1, 3, f)
			put(run, 2, 3, realResult(t, run, 2, 3))
		}, results.ErrFleetMismatch, "process 1 differs from process 0 in version"},
		{"other image", func(run string) {
			put(run, 0, 3, realResult(t, run, 0, 3))
			put(run, 1, 3, realResult(t, run, 1, 3))
			f := realResult(t, run, 2, 3)
			f.Runs[0].Fleet.Processes[0].Image = "lockbench:other"
			put(run, 2, 3, f)
		}, results.ErrFleetMismatch, "process 2 differs from process 0 in image"},
		{"other keys", func(run string) {
			put(run, 0, 3, realResult(t, run, 0, 3))
			f := realResult(t, run, 1, 3)
			f.Runs[0].Keys++
			put(run, 1, 3, f)
		}, results.ErrFleetMismatch, "process 1 differs from process 0 in keys"},
		{"nothing stored", func(string) {}, ErrMissing, "no result of run"},
	}
	for i, c := range cases {
		run := fmt.Sprintf("refuse-%d", i)
		c.store(run)
		f, err := Fetch(t.Context(), opt, run, 3, "test", nil)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.names) {
			t.Errorf("%s: %v; want %v naming %q", c.name, err, c.want, c.names)
		}
		if f != nil {
			t.Errorf("%s: a merged file, for results that are not one run's", c.name)
		}
		// lockbench merge --from exits 2 for results that are not one run's: the input.
		if bad := BadInput(err); bad != (c.want != ErrMissing) {
			t.Errorf("%s: BadInput %v", c.name, bad)
		}
	}
	// A store that does not answer is no bad input: it may answer later.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if _, err := Fetch(ctx, Options{Addr: "127.0.0.1:1"}, "r", 1, "test", nil); err == nil || BadInput(err) {
		t.Errorf("a store that does not answer: %v, BadInput %v", err, BadInput(err))
	}
}

func TestFetchNamesMissingProcesses(t *testing.T) {
	srv := redistest.NewServer(t)
	opt := Options{Addr: srv.Addr()}
	s := openStore(t, opt)
	const run = "missing"
	for _, i := range []int{0, 2} {
		if err := s.Put(t.Context(), run, i, 4, realResult(t, run, i, 4)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Fetch(t.Context(), opt, run, 4, "test", nil)
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "process 1, 3 of 4") {
		t.Fatalf("%v: want ErrMissing naming processes 1 and 3", err)
	}
	if f == nil || f.Complete || fmt.Sprint(f.Runs[0].Fleet.Lost) != "[1 3]" {
		t.Fatalf("merged file %v: want the two results merged, incomplete, 1 and 3 lost", f)
	}
	// Asked for 2 processes, the results of a run of 4 are another run's.
	if _, err := Fetch(t.Context(), opt, run, 2, "test", nil); !errors.Is(err, ErrForeign) {
		t.Errorf("--expect 2 on a run of 4: %v, want ErrForeign", err)
	}
}

func TestFetchDetectsDamage(t *testing.T) {
	srv := redistest.NewServer(t)
	opt := Options{Addr: srv.Addr(), ChunkSize: 1000}
	s := openStore(t, opt)
	const run = "damaged"
	if err := s.Put(t.Context(), run, 0, 1, realResult(t, run, 0, 1)); err != nil {
		t.Fatal(err)
	}
	stored, err := s.List(t.Context(), run)
	if err != nil {
		t.Fatal(err)
	}
	hash := runKey(run, "r:"+stored[0].entry)
	if err := s.c.Do(t.Context(), s.c.B().Hset().Key(hash).FieldValue().FieldValue("3", strings.Repeat("x", 1000)).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if _, err := Fetch(t.Context(), opt, run, 1, "test", nil); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "process 0") {
		t.Errorf("a changed chunk: %v, want ErrCorrupt naming process 0", err)
	}
	if err := s.c.Do(t.Context(), s.c.B().Hdel().Key(hash).Field("2").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if _, err := Fetch(t.Context(), opt, run, 1, "test", nil); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "chunk 3") {
		t.Errorf("a lost chunk: %v, want ErrCorrupt naming the chunk", err)
	}
	if err := s.Delete(t.Context(), run); err != nil {
		t.Fatal(err)
	}
	if n, err := s.c.Do(t.Context(), s.c.B().Dbsize().Build()).AsInt64(); err != nil || n != 0 {
		t.Errorf("after Delete, %d keys (%v): want none", n, err)
	}
}

func TestPasswordFromURLOrOwnVariable(t *testing.T) {
	srv := redistest.NewServer(t, "--requirepass", "s3cret")
	if _, err := Open(t.Context(), Options{Addr: srv.Addr()}); err == nil {
		t.Fatal("no password: connected to a server that requires one")
	}
	// The data nodes' variable is not sent to the collection store; collect's own is.
	data := func(k string) string {
		if k == "LOCKBENCH_REDIS_PASSWORD" {
			return "s3cret"
		}
		return ""
	}
	if _, err := Open(t.Context(), Options{Addr: srv.Addr(), Getenv: data}); err == nil {
		t.Error("the data nodes' password was used for the collection store")
	}
	own := func(k string) string {
		if k == EnvPassword {
			return "s3cret"
		}
		return ""
	}
	for _, opt := range []Options{{Addr: "redis://:s3cret@" + srv.Addr()}, {Addr: srv.Addr(), Getenv: own}} {
		s, err := Open(t.Context(), opt)
		if err != nil {
			t.Errorf("%s: %v", opt.Addr, err)
			continue
		}
		if strings.Contains(s.String(), "s3cret") {
			t.Errorf("the store shows its password: %s", s)
		}
		s.Close()
	}
}

func TestBadInput(t *testing.T) {
	for _, addr := range []string{"", "nohost", "http://x:1", "redis://h:99999"} {
		if _, err := Open(t.Context(), Options{Addr: addr}); !errors.Is(err, ErrBadInput) {
			t.Errorf("address %q: %v, want ErrBadInput", addr, err)
		}
	}
	for _, id := range []string{"", "a b", "x{y}", strings.Repeat("a", 65)} {
		if err := CheckRunID(id); !errors.Is(err, ErrBadInput) {
			t.Errorf("run id %q: %v, want ErrBadInput", id, err)
		}
	}
	if err := CheckRunID(NewRunID()); err != nil {
		t.Errorf("NewRunID: %v", err)
	}
}
