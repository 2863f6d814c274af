// Package lines batches the protocol's lines into few writes, for both ends of the
// external-driver protocol: lockbench's requests and an adapter's replies.
package lines

import (
	"io"
	"runtime"
	"sync"
)

// Batch collects lines from many goroutines and writes them with as few writes as it can: a
// goroutine that queues a line while another is writing, or is about to, leaves it to that one,
// which writes everything queued meanwhile. No goroutine of its own, and no hand-off: the first
// goroutine to find the batch idle writes. Safe for concurrent use.
//
// Before that first goroutine writes, it yields the processor once (runtime.Gosched): the
// goroutines made runnable with it (the callers a batch of replies woke, the waits a batch of
// Redis replies ended) queue their lines meanwhile and share its write. With one P (GOMAXPROCS
// 1, as lockbench and its adapters run when placed on one CPU) nothing else runs between two
// writes of a goroutine that does not block, so without the yield every line was a write of its
// own, and a wake-up of the process at the other end of the pipe.
type Batch struct {
	w       io.Writer
	mu      sync.Mutex
	buf     []byte // lines queued, not yet given to w
	spare   []byte // the buffer being written, reused once written
	writing bool   // a goroutine is writing, or yielding before it writes: it writes buf too
	err     error
	writes  int64 // writes made, for tests and benchmarks (Writes)
}

// New returns a Batch writing to w.
func New(w io.Writer) *Batch {
	return &Batch{w: w, buf: make([]byte, 0, 4096), spare: make([]byte, 0, 4096)}
}

// Begin locks the batch and returns its buffer, to append whole lines to. End must follow, with
// the buffer appended to: between them, the caller holds the batch's lock.
func (b *Batch) Begin() []byte {
	b.mu.Lock()
	return b.buf
}

// End takes back the buffer Begin returned, with lines appended, and unlocks. With write, the
// lines are written before End returns, unless another goroutine is writing or about to: then
// that one writes them. Without, they wait for the next End with write or Flush. The error is
// the first write error the batch met (every later line is dropped).
func (b *Batch) End(buf []byte, write bool) error {
	b.buf = buf
	if !write || b.writing || len(b.buf) == 0 {
		err := b.err
		b.mu.Unlock()
		return err
	}
	b.writing = true
	b.mu.Unlock()
	runtime.Gosched() // let the goroutines runnable now queue their lines: one write for all
	b.mu.Lock()
	return b.writeLocked()
}

// Flush writes the lines queued, as End with write does.
func (b *Batch) Flush() error { return b.End(b.Begin(), true) }

// Writes is how many writes the batch has made.
func (b *Batch) Writes() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.writes
}

// writeLocked writes until nothing is queued, with the lock held except during each write; b.writing
// is set.
func (b *Batch) writeLocked() error {
	for len(b.buf) > 0 && b.err == nil {
		out := b.buf
		b.buf = b.spare[:0]
		b.writes++
		b.mu.Unlock()
		_, err := b.w.Write(out)
		b.mu.Lock()
		b.spare = out[:0]
		if err != nil {
			b.err = err
		}
	}
	if b.err != nil {
		b.buf = b.buf[:0]
	}
	b.writing = false
	err := b.err
	b.mu.Unlock()
	return err
}
