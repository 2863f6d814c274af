// Package adapter is the adapter side of lockbench's external-driver protocol, for adapters
// written in Go: Serve speaks the protocol on a reader and a writer (an adapter's stdin and
// stdout) and calls a Library, many operations at once. adapters/null and adapters/redsync are
// its two users; docs/external-drivers.md describes the protocol for other languages.
package adapter

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/extdriver"
)

// ErrNotOwner is what a Library's Release returns, wrapped or not, when the owner does not hold
// the lock: Serve answers notowner.
var ErrNotOwner = errors.New("adapter: not the owner")

// Library is the lock library an adapter drives. Its methods are called concurrently, but never
// two at once for one owner (lockbench's owners are sequential).
type Library interface {
	// Hello describes the library; Serve fills in Protocol.
	Hello() extdriver.Hello
	// Acquire takes lock name for owner. It returns nil when granted, ctx's error when ctx
	// ended first (the wait ran out, or lockbench cancelled it), any other error for a failure.
	Acquire(ctx context.Context, owner, name string) error
	// Release releases one hold of name by owner: ErrNotOwner when owner does not hold it.
	Release(ctx context.Context, owner, name string) error
}

// Serve writes the hello line to w, then answers the requests read from r until r ends (lockbench
// closed the adapter's stdin), then waits for the operations in flight and returns. An error is
// one of reading, writing or a request that is not the protocol: the adapter should exit non-zero.
func Serve(r io.Reader, w io.Writer, lib Library) error {
	h := lib.Hello()
	h.Protocol = extdriver.Protocol
	hello, err := json.Marshal(h)
	if err != nil {
		return err
	}
	s := &server{lib: lib, out: make(chan []byte, 1024), done: make(chan struct{}), writeErr: make(chan error, 1), cancels: map[uint64]context.CancelFunc{}}
	s.out <- append(append([]byte("hello "), hello...), '\n')
	go s.write(w)
	err = s.read(r)
	// lockbench is gone or done: nobody waits for the acquires still waiting.
	s.mu.Lock()
	for _, cancel := range s.cancels {
		cancel()
	}
	s.mu.Unlock()
	s.wg.Wait()
	close(s.done)
	if werr := <-s.writeErr; err == nil {
		err = werr
	}
	return err
}

type server struct {
	lib      Library
	out      chan []byte
	done     chan struct{}
	writeErr chan error
	wg       sync.WaitGroup
	mu       sync.Mutex
	cancels  map[uint64]context.CancelFunc
}

// write sends the replies, many per write when they queue up.
func (s *server) write(w io.Writer) {
	bw := bufio.NewWriterSize(w, 64<<10)
	var err error
	for {
		select {
		case b := <-s.out:
			bw.Write(b)
			for n := len(s.out); n > 0; n-- {
				bw.Write(<-s.out)
			}
			if err = bw.Flush(); err != nil {
				s.writeErr <- err
				for { // keep the operations from blocking until done
					select {
					case <-s.out:
					case <-s.done:
						return
					}
				}
			}
		case <-s.done:
			for n := len(s.out); n > 0; n-- {
				bw.Write(<-s.out)
			}
			s.writeErr <- bw.Flush()
			return
		}
	}
}

func (s *server) reply(id uint64, status, msg string) {
	b := strconv.AppendUint(make([]byte, 0, 32), id, 10)
	b = append(b, ' ')
	b = append(b, status...)
	if msg != "" {
		b = append(b, ' ')
		b = append(b, strings.NewReplacer("\n", " ", "\r", " ").Replace(msg)...)
	}
	s.out <- append(b, '\n')
}

func (s *server) read(r io.Reader) error {
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		f := strings.Split(lines.Text(), " ")
		id, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil || len(f) < 2 {
			return fmt.Errorf("adapter: not a request: %q", lines.Text())
		}
		switch {
		case f[1] == extdriver.OpPing && len(f) == 2:
			s.reply(id, extdriver.StatusOK, "")
		case f[1] == extdriver.OpCancel && len(f) == 2:
			s.mu.Lock()
			if c := s.cancels[id]; c != nil {
				c()
			}
			s.mu.Unlock()
		case f[1] == extdriver.OpAcquire && len(f) == 5:
			wait, err := strconv.ParseInt(f[4], 10, 64)
			if err != nil {
				return fmt.Errorf("adapter: bad wait in %q", lines.Text())
			}
			s.acquire(id, f[2], f[3], wait)
		case f[1] == extdriver.OpRelease && len(f) == 4:
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				err := s.lib.Release(context.Background(), f[2], f[3])
				switch {
				case err == nil:
					s.reply(id, extdriver.StatusOK, "")
				case errors.Is(err, ErrNotOwner):
					s.reply(id, extdriver.StatusNotOwner, err.Error())
				default:
					s.reply(id, extdriver.StatusError, err.Error())
				}
			}()
		default:
			return fmt.Errorf("adapter: not a request: %q", lines.Text())
		}
	}
	return lines.Err()
}

func (s *server) acquire(id uint64, owner, name string, waitMS int64) {
	ctx, cancel := context.WithCancel(context.Background())
	if waitMS >= 0 {
		ctx, cancel = context.WithTimeout(context.Background(), time.Duration(waitMS)*time.Millisecond)
	}
	s.mu.Lock()
	s.cancels[id] = cancel
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := s.lib.Acquire(ctx, owner, name)
		s.mu.Lock()
		delete(s.cancels, id)
		s.mu.Unlock()
		cancel()
		switch {
		case err == nil:
			s.reply(id, extdriver.StatusOK, "")
		case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			s.reply(id, extdriver.StatusTimeout, "")
		default:
			s.reply(id, extdriver.StatusError, err.Error())
		}
	}()
}
