// Package adapter is the adapter side of lockbench's external-driver protocol, for adapters
// written in Go: Serve speaks the protocol on a reader and a writer (an adapter's stdin and
// stdout) and calls a Library, many operations at once. adapters/null and adapters/redsync are
// its two users; docs/external-drivers.md describes the protocol for other languages.
package adapter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/lockbench/lockbench/extdriver"
	"github.com/lockbench/lockbench/extdriver/internal/lines"
)

// ErrNotOwner is what a Library's Release returns, wrapped or not, when the owner does not hold
// the lock: Serve answers notowner.
var ErrNotOwner = errors.New("adapter: not the owner")

// Library is the lock library an adapter drives. Its methods are called concurrently, but never
// two at once for one owner (lockbench's owners are sequential).
type Library interface {
	// Hello describes the library; Serve fills in Protocol. Its Kinds name the kinds beyond
	// mutex and reentrant only when the Library implements their interface (RWLibrary,
	// MultiLibrary, FencedLibrary).
	Hello() extdriver.Hello
	// Acquire takes lock name for owner. It returns nil when granted, ctx's error when ctx
	// ended first (the wait ran out, or lockbench cancelled it), any other error for a failure.
	Acquire(ctx context.Context, owner, name string) error
	// Release releases one hold of name by owner: ErrNotOwner when owner does not hold it.
	Release(ctx context.Context, owner, name string) error
}

// Immediate is a Library whose calls do no I/O and return at once (an in-memory lock): Serve
// calls TryAcquire and every release on the goroutine that reads the requests, and starts a
// goroutine only for an acquire that has to wait. That saves a goroutine, a context and a
// hand-off per operation: what the null adapter needs to measure the pipe and not itself.
type Immediate interface {
	Library
	// TryAcquire takes lock name for owner if it is free (or owner's) now, and reports whether
	// it did; it never waits.
	TryAcquire(owner, name string) (bool, error)
}

// ImmediateFenced is an Immediate library's fenced locks: Serve calls TryAcquireFenced on its
// reading goroutine, as TryAcquire.
type ImmediateFenced interface {
	Immediate
	FencedLibrary
	// TryAcquireFenced takes the fenced lock name for owner if it can now, and returns the
	// grant's token; it never waits.
	TryAcquireFenced(owner, name string) (bool, int64, error)
}

// RWLibrary is a Library with read-write locks (kind "rw"): readers share, a writer excludes
// readers and writers. Errors as Acquire's and Release's.
type RWLibrary interface {
	Library
	AcquireRead(ctx context.Context, owner, name string) error
	ReleaseRead(ctx context.Context, owner, name string) error
	AcquireWrite(ctx context.Context, owner, name string) error
	ReleaseWrite(ctx context.Context, owner, name string) error
}

// MultiLibrary is a Library with multi-locks (kind "multi"): AcquireMulti takes every lock in
// names or none, without deadlock against owners taking overlapping sets; ReleaseMulti releases
// them all (ErrNotOwner when owner did not hold one). names are distinct.
type MultiLibrary interface {
	Library
	AcquireMulti(ctx context.Context, owner string, names []string) error
	ReleaseMulti(ctx context.Context, owner string, names []string) error
}

// FencedLibrary is a Library with fenced locks (kind "fenced"): AcquireFenced returns the
// grant's token, greater than that of every earlier grant of name. Released with Release.
type FencedLibrary interface {
	Library
	AcquireFenced(ctx context.Context, owner, name string) (int64, error)
}

// checkKinds refuses a hello that claims a kind lib does not implement.
func checkKinds(h extdriver.Hello, lib Library) error {
	for _, k := range h.Kinds {
		var ok bool
		switch k {
		case extdriver.KindMutex, extdriver.KindReentrant, extdriver.KindFair:
			ok = true // claims about Acquire itself
		case extdriver.KindRW:
			_, ok = lib.(RWLibrary)
		case extdriver.KindMulti:
			_, ok = lib.(MultiLibrary)
		case extdriver.KindFenced:
			_, ok = lib.(FencedLibrary)
		}
		if !ok {
			return fmt.Errorf("adapter: the hello claims kind %q, which this Library (%T) does not implement", k, lib)
		}
	}
	return nil
}

// Serve writes the hello line to w, then answers the requests read from r until r ends (lockbench
// closed the adapter's stdin), then waits for the operations in flight and returns. An error is
// one of reading, writing or a request that is not the protocol: the adapter should exit non-zero.
func Serve(r io.Reader, w io.Writer, lib Library) error {
	h := lib.Hello()
	h.Protocol = extdriver.Protocol
	if err := checkKinds(h, lib); err != nil {
		return err
	}
	hello, err := json.Marshal(h)
	if err != nil {
		return err
	}
	w, wdone := rawOut(w)
	defer wdone() // after the last Flush below
	s := &server{lib: lib, out: lines.New(w), cancels: map[uint64]context.CancelFunc{}, names: map[string]string{}, work: newWorkers()}
	s.immediate, _ = lib.(Immediate)
	s.immFenced, _ = lib.(ImmediateFenced)
	b := s.out.Begin()
	b = append(append(append(b, "hello "...), hello...), '\n')
	if err := s.out.End(b, true); err != nil {
		return err
	}
	if s.immediate == nil {
		// A library that waits on goroutines of its own needs the P while this one reads
		// (poll_unix.go); the null adapter answers on this goroutine, and a blocking read is one
		// system call where the poller makes three (measured: 257-283k against 191-215k
		// acquisitions/s placed, docs/external-drivers.md).
		var done func()
		r, done = pollable(r)
		defer done()
	}
	err = s.read(r)
	// lockbench is gone or done: nobody waits for the acquires still waiting.
	s.mu.Lock()
	for _, cancel := range s.cancels {
		cancel()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.work.stop()
	if werr := s.out.Flush(); err == nil {
		err = werr
	}
	return err
}

type server struct {
	lib       Library
	immediate Immediate       // lib, when it is one
	immFenced ImmediateFenced // lib, when it is one
	out       *lines.Batch
	work      *workers // runs the operations that do not answer on the reading goroutine
	wg        sync.WaitGroup
	mu        sync.Mutex
	cancels   map[uint64]context.CancelFunc
	// names interns owners and lock names (the reading goroutine's alone): a run has few of
	// each, and a string per request would be an allocation per operation.
	names map[string]string
}

// maxInterned bounds names: a run over more distinct names allocates the others.
const maxInterned = 1 << 16

func (s *server) intern(b []byte) string {
	if v, ok := s.names[string(b)]; ok { // no allocation: the compiler looks up in place
		return v
	}
	v := string(b)
	if len(s.names) < maxInterned {
		s.names[v] = v
	}
	return v
}

// flushAt is how many bytes of replies the reading goroutine lets queue before it writes them
// even though more requests are waiting to be read.
const flushAt = 16 << 10

// reply queues "ID STATUS [MSG]"; now writes it (and whatever is queued) at once, else it waits
// for the reading goroutine's next flush.
func (s *server) reply(id uint64, status, msg string, now bool) {
	b := s.out.Begin()
	b = strconv.AppendUint(b, id, 10)
	b = append(append(b, ' '), status...)
	if msg != "" {
		b = append(b, ' ')
		for i := 0; i < len(msg); i++ { // one line: line breaks become spaces
			c := msg[i]
			if c == '\n' || c == '\r' {
				c = ' '
			}
			b = append(b, c)
		}
	}
	b = append(b, '\n')
	now = now || len(b) >= flushAt
	_ = s.out.End(b, now) // a write error ends the adapter at its next read: lockbench is gone
}

// replyToken queues "ID ok TOKEN", as reply does.
func (s *server) replyToken(id uint64, token int64, now bool) {
	b := s.out.Begin()
	b = strconv.AppendUint(b, id, 10)
	b = append(append(append(b, ' '), extdriver.StatusOK...), ' ')
	b = append(strconv.AppendInt(b, token, 10), '\n')
	_ = s.out.End(b, now || len(b) >= flushAt)
}

// replyErr answers the outcome of an acquire (notOwner false) or a release (true).
func (s *server) replyErr(id uint64, err error, release, now bool) {
	switch {
	case err == nil:
		s.reply(id, extdriver.StatusOK, "", now)
	case release && errors.Is(err, ErrNotOwner):
		s.reply(id, extdriver.StatusNotOwner, err.Error(), now)
	case !release && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		s.reply(id, extdriver.StatusTimeout, "", now)
	default:
		s.reply(id, extdriver.StatusError, err.Error(), now)
	}
}

func (s *server) read(in io.Reader) error {
	r := bufio.NewReaderSize(in, 64<<10)
	f := make([][]byte, 0, 8)
	for {
		if !lines.Buffered(r) { // about to wait for lockbench: send what is queued first
			if err := s.out.Flush(); err != nil {
				return err
			}
		}
		line, err := r.ReadSlice('\n')
		if err == io.EOF && len(line) == 0 {
			return nil
		}
		if err != nil {
			if err == bufio.ErrBufferFull {
				return fmt.Errorf("adapter: a request longer than %d bytes", r.Size())
			}
			if err == io.EOF {
				return fmt.Errorf("adapter: not a request (no line break): %q", line)
			}
			return err
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'})
		f = f[:0]
		for len(line) > 0 {
			i := bytes.IndexByte(line, ' ')
			if i < 0 {
				f = append(f, line)
				break
			}
			f = append(f, line[:i])
			line = line[i+1:]
		}
		if err := s.request(f); err != nil {
			return err
		}
	}
}

// request answers one request, split into its fields.
func (s *server) request(f [][]byte) error {
	bad := func() error { return fmt.Errorf("adapter: not a request: %q", bytes.Join(f, []byte{' '})) }
	if len(f) < 2 {
		return bad()
	}
	id, ok := parseUint(f[0])
	if !ok {
		return bad()
	}
	op := f[1]
	switch {
	case string(op) == extdriver.OpPing && len(f) == 2:
		s.reply(id, extdriver.StatusOK, "", false)
	case string(op) == extdriver.OpCancel && len(f) == 2:
		s.mu.Lock()
		if c := s.cancels[id]; c != nil {
			c()
		}
		s.mu.Unlock()
	case string(op) == extdriver.OpAcquireMulti && len(f) >= 5:
		wait, ok := parseWait(f[3])
		if !ok {
			return bad()
		}
		owner, names := s.intern(f[2]), s.internAll(f[4:])
		s.acquire(id, wait, func(ctx context.Context) (int64, error) {
			lib, ok := s.lib.(MultiLibrary)
			if !ok {
				return -1, errUnsupported(extdriver.KindMulti)
			}
			return -1, lib.AcquireMulti(ctx, owner, names)
		})
	case string(op) == extdriver.OpReleaseMulti && len(f) >= 4:
		owner, names := s.intern(f[2]), s.internAll(f[3:])
		s.release(id, func() error {
			lib, ok := s.lib.(MultiLibrary)
			if !ok {
				return errUnsupported(extdriver.KindMulti)
			}
			return lib.ReleaseMulti(context.Background(), owner, names)
		})
	case len(f) == 5 && acquireOp(op) != "":
		wait, ok := parseWait(f[4])
		if !ok {
			return bad()
		}
		s.acquireOne(id, acquireOp(op), s.intern(f[2]), s.intern(f[3]), wait)
	case len(f) == 4 && releaseOp(op) != "":
		s.releaseOne(id, releaseOp(op), s.intern(f[2]), s.intern(f[3]))
	default:
		return bad()
	}
	return nil
}

// acquireOp is the constant op names, if it is an acquire of one lock; else "". (A constant,
// not string(op): no allocation.)
func acquireOp(op []byte) string {
	for _, o := range [...]string{extdriver.OpAcquire, extdriver.OpAcquireRead, extdriver.OpAcquireWrite, extdriver.OpAcquireFenced} {
		if string(op) == o {
			return o
		}
	}
	return ""
}

// releaseOp is acquireOp's twin for a release of one lock.
func releaseOp(op []byte) string {
	for _, o := range [...]string{extdriver.OpRelease, extdriver.OpReleaseRead, extdriver.OpReleaseWrite} {
		if string(op) == o {
			return o
		}
	}
	return ""
}

func (s *server) internAll(fs [][]byte) []string {
	names := make([]string, len(fs))
	for i, b := range fs {
		names[i] = s.intern(b)
	}
	return names
}

func errUnsupported(kind string) error {
	return fmt.Errorf("adapter: kind %s is not offered (see the hello)", kind)
}

// acquireOne answers acquire, racquire, wacquire and facquire.
func (s *server) acquireOne(id uint64, op, owner, name string, wait int64) {
	if op == extdriver.OpAcquire && s.immediate != nil {
		ok, err := s.immediate.TryAcquire(owner, name)
		switch {
		case err != nil || ok:
			s.replyErr(id, err, false, false)
			return
		case wait == 0:
			s.reply(id, extdriver.StatusTimeout, "", false)
			return
		}
	}
	if op == extdriver.OpAcquireFenced && s.immFenced != nil {
		ok, token, err := s.immFenced.TryAcquireFenced(owner, name)
		switch {
		case err != nil:
			s.replyErr(id, err, false, false)
			return
		case ok:
			s.replyToken(id, token, false)
			return
		case wait == 0:
			s.reply(id, extdriver.StatusTimeout, "", false)
			return
		}
	}
	s.acquire(id, wait, func(ctx context.Context) (int64, error) {
		switch op {
		case extdriver.OpAcquireRead, extdriver.OpAcquireWrite:
			lib, ok := s.lib.(RWLibrary)
			if !ok {
				return -1, errUnsupported(extdriver.KindRW)
			}
			if op == extdriver.OpAcquireRead {
				return -1, lib.AcquireRead(ctx, owner, name)
			}
			return -1, lib.AcquireWrite(ctx, owner, name)
		case extdriver.OpAcquireFenced:
			lib, ok := s.lib.(FencedLibrary)
			if !ok {
				return -1, errUnsupported(extdriver.KindFenced)
			}
			return lib.AcquireFenced(ctx, owner, name)
		}
		return -1, s.lib.Acquire(ctx, owner, name)
	})
}

// acquire runs one acquire on a kept goroutine (workers), with a context that ends at the wait
// (negative: none) or at lockbench's cancel. A token of 0 or more is a fenced grant's, sent
// with ok; -1 is none.
func (s *server) acquire(id uint64, waitMS int64, call func(ctx context.Context) (int64, error)) {
	var ctx context.Context
	var cancel context.CancelFunc
	if waitMS >= 0 {
		ctx, cancel = context.WithTimeout(context.Background(), time.Duration(waitMS)*time.Millisecond)
	} else {
		ctx, cancel = context.WithCancel(context.Background())
	}
	s.mu.Lock()
	s.cancels[id] = cancel
	s.mu.Unlock()
	s.wg.Add(1)
	s.work.run(func() {
		defer s.wg.Done()
		token, err := call(ctx)
		s.mu.Lock()
		delete(s.cancels, id)
		s.mu.Unlock()
		cancel()
		if err == nil && token >= 0 {
			s.replyToken(id, token, true)
			return
		}
		if err == nil && token < -1 {
			err = fmt.Errorf("adapter: fencing token %d: tokens are 0 or more", token)
		}
		s.replyErr(id, err, false, true)
	})
}

// releaseOne answers release, rrelease and wrelease: at once on this goroutine for an Immediate
// library, else on a kept goroutine (workers).
func (s *server) releaseOne(id uint64, op, owner, name string) {
	if s.immediate != nil { // no closure: this path allocates nothing
		s.replyErr(id, s.releaseCall(op, owner, name), true, false)
		return
	}
	s.wg.Add(1)
	s.work.run(func() {
		defer s.wg.Done()
		s.replyErr(id, s.releaseCall(op, owner, name), true, true)
	})
}

func (s *server) releaseCall(op, owner, name string) error {
	ctx := context.Background()
	switch op {
	case extdriver.OpReleaseRead, extdriver.OpReleaseWrite:
		lib, ok := s.lib.(RWLibrary)
		if !ok {
			return errUnsupported(extdriver.KindRW)
		}
		if op == extdriver.OpReleaseRead {
			return lib.ReleaseRead(ctx, owner, name)
		}
		return lib.ReleaseWrite(ctx, owner, name)
	}
	return s.lib.Release(ctx, owner, name)
}

// release runs one release (mrelease), as releaseOne does.
func (s *server) release(id uint64, call func() error) {
	if s.immediate != nil {
		s.replyErr(id, call(), true, false)
		return
	}
	s.wg.Add(1)
	s.work.run(func() {
		defer s.wg.Done()
		s.replyErr(id, call(), true, true)
	})
}

// parseUint parses a request id: decimal digits only.
func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// parseWait parses WAIT_MS: -1, or milliseconds.
func parseWait(b []byte) (int64, bool) {
	if string(b) == "-1" {
		return -1, true
	}
	n, ok := parseUint(b)
	return int64(n), ok && n <= 1<<53
}
