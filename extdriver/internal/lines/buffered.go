package lines

import (
	"bufio"
	"bytes"
)

// Buffered reports whether r holds a whole line already, so that reading it will not block:
// both ends flush what they have queued before a read that would wait for the other.
func Buffered(r *bufio.Reader) bool {
	n := r.Buffered()
	if n == 0 {
		return false
	}
	p, _ := r.Peek(n)
	return bytes.IndexByte(p, '\n') >= 0
}
