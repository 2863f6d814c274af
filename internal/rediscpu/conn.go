package rediscpu

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// Conn is one plain RESP2 connection that sends a list of commands as one pipeline and reads
// their replies. The experiments use it instead of a client library so that the pipeline depth is
// exactly what they ask for: rueidis's automatic pipelining decides the depth itself. It is not
// safe for concurrent use.
type Conn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

// RedisError is an error reply ("-ERR ...").
type RedisError string

func (e RedisError) Error() string { return string(e) }

// Dial connects to addr ("host:port").
func Dial(addr string) (*Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("rediscpu: %w", err)
	}
	return &Conn{c: c, r: bufio.NewReaderSize(c, 1<<16), w: bufio.NewWriterSize(c, 1<<16)}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Do sends one command and returns its reply; an error reply is returned as a RedisError.
func (c *Conn) Do(args ...string) (any, error) {
	r, err := c.Pipeline([][]string{args})
	if err != nil {
		return nil, err
	}
	if e, ok := r[0].(RedisError); ok {
		return nil, e
	}
	return r[0], nil
}

// Pipeline writes every command, then reads one reply per command. Replies are string (simple
// or bulk), int64, nil, RedisError or []any. The error is a connection or protocol error only.
func (c *Conn) Pipeline(cmds [][]string) ([]any, error) {
	for _, cmd := range cmds {
		c.writeCommand(cmd)
	}
	if err := c.w.Flush(); err != nil {
		return nil, fmt.Errorf("rediscpu: write: %w", err)
	}
	out := make([]any, len(cmds))
	for i := range out {
		r, err := c.Read()
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

func (c *Conn) writeCommand(args []string) {
	c.w.WriteByte('*')
	c.w.WriteString(strconv.Itoa(len(args)))
	c.w.WriteString("\r\n")
	for _, a := range args {
		c.w.WriteByte('$')
		c.w.WriteString(strconv.Itoa(len(a)))
		c.w.WriteString("\r\n")
		c.w.WriteString(a)
		c.w.WriteString("\r\n")
	}
}

var errProtocol = errors.New("rediscpu: malformed reply")

// Read reads one reply (also a pushed pub/sub message, on a subscribed connection).
func (c *Conn) Read() (any, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("rediscpu: read: %w", err)
	}
	if len(line) < 3 {
		return nil, errProtocol
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return RedisError(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err // $-1: nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, b); err != nil {
			return nil, fmt.Errorf("rediscpu: read: %w", err)
		}
		return string(b[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err // *-1: nil
		}
		a := make([]any, n)
		for i := range a {
			if a[i], err = c.Read(); err != nil {
				return nil, err
			}
		}
		return a, nil
	}
	return nil, fmt.Errorf("%w: %q", errProtocol, line)
}

// replyError returns the first error reply in r, looking into arrays.
func replyError(r any) error {
	switch v := r.(type) {
	case RedisError:
		return v
	case []any:
		for _, e := range v {
			if err := replyError(e); err != nil {
				return err
			}
		}
	}
	return nil
}
