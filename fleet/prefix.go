package fleet

import (
	"bytes"
	"io"
	"sync"
)

// PrefixWriter writes whole lines to w, each with a prefix, under a mutex shared by all the
// writers of one w so that their lines do not interleave mid-line. One PrefixWriter is not safe
// for concurrent use; several sharing a mutex are.
type PrefixWriter = prefixWriter

// NewPrefixWriter returns a writer of whole lines to w, each prefixed, written under mu.
// Call Flush at the end for a last line without a newline.
func NewPrefixWriter(w io.Writer, mu *sync.Mutex, prefix string) *PrefixWriter {
	return &prefixWriter{w: w, mu: mu, prefix: prefix}
}

// Flush writes a last line without a newline.
func (p *prefixWriter) Flush() { p.flush() }

type prefixWriter struct {
	w      io.Writer
	mu     *sync.Mutex
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			break
		}
		p.emit(p.buf[:i+1])
		p.buf = p.buf[i+1:]
	}
	return len(b), nil
}

func (p *prefixWriter) emit(line []byte) {
	// A progress line redrawn with \r would be noise through a pipe: keep what it ends with.
	if i := bytes.LastIndexByte(bytes.TrimRight(line, "\r\n"), '\r'); i >= 0 {
		line = line[i+1:]
	}
	out := make([]byte, 0, len(p.prefix)+len(line))
	out = append(append(out, p.prefix...), line...)
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = p.w.Write(out) // one write per line: a writer that adds its own newline keeps lines whole
}

// flush writes a last line without a newline.
func (p *prefixWriter) flush() {
	if len(p.buf) > 0 {
		p.emit(append(p.buf, '\n'))
		p.buf = nil
	}
}
