package adapter_test

import (
	"io"
	"strconv"
	"testing"

	"github.com/lockbench/lockbench/extdriver/adapter"
)

// cycles is an adapter's stdin for n acquire-release cycles of owners' own locks, generated as
// it is read: "ID acquire oK oK -1" then "ID release oK oK", K cycling over owners.
type cycles struct {
	n, i    int
	owners  []string
	pending []byte
}

func newCycles(n, owners int) *cycles {
	c := &cycles{n: n}
	for k := range owners {
		c.owners = append(c.owners, "o"+strconv.Itoa(k))
	}
	return c
}

func (c *cycles) Read(p []byte) (int, error) {
	for len(c.pending) < len(p) && c.i < c.n {
		o := c.owners[c.i%len(c.owners)]
		b := strconv.AppendInt(c.pending, int64(2*c.i), 10)
		b = append(append(append(append(append(b, " acquire "...), o...), ' '), o...), " -1\n"...)
		b = strconv.AppendInt(b, int64(2*c.i+1), 10)
		b = append(append(append(append(append(b, " release "...), o...), ' '), o...), '\n')
		c.pending = b
		c.i++
	}
	if len(c.pending) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.pending)
	c.pending = c.pending[:copy(c.pending, c.pending[n:])]
	return n, nil
}

// countingWriter counts the writes Serve makes.
type countingWriter struct{ writes, bytes int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.bytes += len(p)
	return len(p), nil
}

// BenchmarkServe is the adapter side alone: Serve over the null adapter's lock answering
// acquire-release cycles read from a buffer, replies written to a counter. ns/op and
// allocs/op are per cycle (two requests; the input's generation is in them); writes/op shows
// the batching.
func BenchmarkServe(b *testing.B) {
	in := newCycles(b.N, 64)
	w := &countingWriter{}
	b.ReportAllocs()
	b.ResetTimer()
	if err := adapter.Serve(in, w, adapter.NewMemory(0)); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(w.writes)/float64(b.N), "writes/op")
}

// TestServeAllocates: answering a cycle that does not wait allocates nothing on the adapter's
// side once its owners and names are known (interned), and the replies of a batch of requests
// go out in one write, not one per reply. Both are what let the null adapter measure the pipe
// rather than itself.
func TestServeAllocates(t *testing.T) {
	const n = 20000
	var w *countingWriter
	allocs := testing.AllocsPerRun(1, func() {
		w = &countingWriter{}
		if err := adapter.Serve(newCycles(n, 64), w, adapter.NewMemory(0)); err != nil {
			t.Fatal(err)
		}
	})
	// Serve's set-up (buffers, maps, the 64 owners interned, the hello) is a few dozen.
	if perCycle := allocs / n; perCycle > 0.05 {
		t.Errorf("%.3f allocations per cycle (%v in all); want none", perCycle, allocs)
	}
	if w.writes > n/10 {
		t.Errorf("%d writes for %d replies: the replies of a batch should share a write", w.writes, 2*n)
	}
}
