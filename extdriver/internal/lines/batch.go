// Package lines batches the protocol's lines into few writes, for both ends of the
// external-driver protocol: lockbench's requests and an adapter's replies.
package lines

import (
	"io"
	"sync"
)

// Batch collects lines from many goroutines and writes them with as few writes as it can: a
// goroutine that queues a line while another is writing leaves it to that one, which writes
// everything queued meanwhile in its next write. No goroutine of its own, and no hand-off: the
// first goroutine to find the batch idle writes. Safe for concurrent use.
type Batch struct {
	w       io.Writer
	mu      sync.Mutex
	buf     []byte // lines queued, not yet given to w
	spare   []byte // the buffer being written, reused once written
	writing bool
	err     error
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
// lines are written now, unless another goroutine is writing: then that one writes them once its
// write returns. Without, they wait for the next End with write or Flush. The error is the first
// write error the batch met (every later line is dropped).
func (b *Batch) End(buf []byte, write bool) error {
	b.buf = buf
	if !write || b.writing {
		err := b.err
		b.mu.Unlock()
		return err
	}
	return b.writeLocked()
}

// Flush writes the lines queued, as End with write does.
func (b *Batch) Flush() error { return b.End(b.Begin(), true) }

// writeLocked writes until nothing is queued, with the lock held except during each write.
func (b *Batch) writeLocked() error {
	b.writing = true
	for len(b.buf) > 0 && b.err == nil {
		out := b.buf
		b.buf = b.spare[:0]
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
