package lines

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// recorder is a writer that keeps every write apart.
type recorder struct {
	mu     sync.Mutex
	writes [][]byte
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func (r *recorder) all() (string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(bytes.Join(r.writes, nil)), len(r.writes)
}

func line(b *Batch, s string, write bool) error {
	buf := b.Begin()
	buf = append(append(buf, s...), '\n')
	return b.End(buf, write)
}

// TestBatchLines: lines queued from many goroutines at once all come out, whole, each once.
func TestBatchLines(t *testing.T) {
	w := &recorder{}
	b := New(w)
	const goroutines, each = 16, 500
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				if err := line(b, fmt.Sprintf("%d-%d", g, i), i%3 != 0); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	out, writes := w.all()
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if seen[l] {
			t.Fatalf("line %q twice", l)
		}
		seen[l] = true
	}
	if len(seen) != goroutines*each {
		t.Fatalf("%d lines, want %d", len(seen), goroutines*each)
	}
	if int64(writes) != b.Writes() {
		t.Errorf("Writes() = %d, the writer saw %d", b.Writes(), writes)
	}
}

// TestBatchOneProcessor: with one P (lockbench and its adapters placed on one CPU), the
// goroutines made runnable together (by one batch of replies) each queue a line and End with
// write; they share few writes, not one each. Before the yield in End, this was 64 writes.
func TestBatchOneProcessor(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	w := &recorder{}
	b := New(w)
	const n = 64
	start := make(chan struct{})
	var ready, wg sync.WaitGroup
	for i := range n {
		ready.Add(1)
		wg.Go(func() {
			ready.Done()
			<-start
			if err := line(b, fmt.Sprint(i), true); err != nil {
				t.Error(err)
			}
		})
	}
	ready.Wait()
	runtime.Gosched() // all of them at <-start
	close(start)
	wg.Wait()
	out, writes := w.all()
	if got := strings.Count(out, "\n"); got != n {
		t.Fatalf("%d lines written, want %d", got, n)
	}
	if writes > n/8 {
		t.Errorf("%d writes for %d lines queued at once on one P; want a few", writes, n)
	}
	t.Logf("%d lines in %d writes", n, writes)
}

// failing fails every write.
type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// TestBatchError: the first write error is every later End's, and nothing more is written.
func TestBatchError(t *testing.T) {
	b := New(failing{})
	if err := line(b, "a", true); err == nil {
		t.Fatal("no error from a failing writer")
	}
	if err := line(b, "b", false); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("a later End: %v, want the first error", err)
	}
	if err := b.Flush(); err == nil {
		t.Fatal("Flush after an error: nil")
	}
	if b.Writes() != 1 {
		t.Errorf("%d writes, want 1 (none after the error)", b.Writes())
	}
}
