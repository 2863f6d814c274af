package extdriver

import (
	"strings"
	"sync"
)

// StderrTail is how much of an adapter's stderr lockbench keeps to show with its failure.
const StderrTail = 4 << 10

// tail keeps the last StderrTail bytes written to it: the adapter's stderr, which says why it
// died. Safe for concurrent use.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - StderrTail; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String is the tail, trimmed, or "" when the adapter wrote nothing.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
