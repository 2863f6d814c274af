package extdriver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/extdriver/internal/lines"
	"github.com/lockbench/lockbench/internal/rawio"
)

// Defaults of Options, written down once.
const (
	// DefaultHelloTimeout bounds the wait for the hello line: an interpreter's start and the
	// library's import included.
	DefaultHelloTimeout = 15 * time.Second
	// DefaultPingInterval is how often lockbench checks that the adapter still answers.
	DefaultPingInterval = 500 * time.Millisecond
	// DefaultHangTimeout is how long a ping may go unanswered before the adapter counts as hung
	// and is killed.
	DefaultHangTimeout = 3 * time.Second
	// DefaultShutdownGrace is how long an adapter has to exit after its stdin closes.
	DefaultShutdownGrace = 5 * time.Second
	// DefaultReplyTimeout bounds the wait for a release's reply and for a cancelled acquire's:
	// an adapter that answers pings but whose library never returns (a Redis call with no
	// timeout) must not keep a worker, and so the run, from ending. A reply that comes later
	// is dropped.
	DefaultReplyTimeout = 30 * time.Second
	// maxLine bounds one line from the adapter.
	maxLine = 64 << 10
)

// Errors, checked with errors.Is.
var (
	// ErrAdapter: the adapter died, hung, or wrote what is not the protocol. Every operation
	// after it fails with it, at once; its message has the adapter's stderr tail.
	// It wraps drivers.ErrBroken, so that a run ends its phase rather than count it to the end.
	ErrAdapter = fmt.Errorf("%w: extdriver: adapter failed", drivers.ErrBroken)
	// ErrLibrary: the adapter answered "error": its library or Redis failed one operation.
	ErrLibrary = errors.New("extdriver: adapter reported an error")
	// ErrClosed: the Adapter was closed.
	ErrClosed = errors.New("extdriver: adapter closed")
)

// Options say which adapter to start and how patient to be with it. Zero durations mean the
// defaults above.
type Options struct {
	// Name names the adapter in messages, e.g. "redis-py".
	Name string
	// Argv is the command; Argv[0] is looked up in PATH.
	Argv []string
	// Env is added to lockbench's environment for the adapter (NAME=value; see Env).
	Env []string
	// Redact, if set, is applied to every message that quotes the adapter (its stderr may
	// print a password it was given).
	Redact func(string) string

	// HelloTimeout, PingInterval, HangTimeout, ShutdownGrace and ReplyTimeout: see the
	// Default… constants of the same names.
	HelloTimeout  time.Duration
	PingInterval  time.Duration
	HangTimeout   time.Duration
	ShutdownGrace time.Duration
	ReplyTimeout  time.Duration
}

func (o *Options) fill() {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.HelloTimeout, DefaultHelloTimeout)
	def(&o.PingInterval, DefaultPingInterval)
	def(&o.HangTimeout, DefaultHangTimeout)
	def(&o.ShutdownGrace, DefaultShutdownGrace)
	def(&o.ReplyTimeout, DefaultReplyTimeout)
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
}

// Adapter is one running adapter process. Its methods are safe for concurrent use: that is how
// many operations are in flight at once.
//
// The hot path allocates nothing: a request is appended to a shared buffer (lines.Batch: one
// write carries every request queued meanwhile, written by the first goroutine to find it idle),
// its reply found through a map of calls pooled for reuse, and the one goroutine that reads the
// adapter's stdout hands each reply to its caller's channel. No timer per operation either: the
// pinger sweeps the calls that have a deadline.
type Adapter struct {
	opt   Options
	cmd   *exec.Cmd // nil for an adapter attached to streams (tests, benchmarks)
	hello Hello
	kinds drivers.Kind

	stderr  tail
	in      io.Closer    // the adapter's stdin
	out     *lines.Batch // requests, written to in
	quit    chan struct{}
	exited  chan struct{} // closed when the process has been waited for
	waitErr error

	// hold is set while the reader hands out a batch of replies: the requests their callers send
	// meanwhile are queued, not written, and the reader writes them all at once when the batch
	// is done (one write rather than one per caller woken).
	hold atomic.Bool

	next    atomic.Uint64
	mu      sync.Mutex
	pending map[uint64]*call
	calls   sync.Pool // of *call

	dead     chan struct{} // closed by fail; err is set before
	err      error
	failOnce sync.Once
	closed   atomic.Bool
	closeErr error
	closeMu  sync.Mutex
}

// call is one request in flight: its reply comes on ch (buffered: the reader never blocks).
type call struct {
	ch chan Reply
	// deadline, set under Adapter.mu, is when the pinger gives up on the reply: zero for none
	// (an acquire with its own wait). ping marks the pinger's own requests: an expired ping
	// means the adapter is hung.
	deadline time.Time
	ping     bool
	// expired: the pinger gave up on it; it is never reused, as its reply may still come.
	expired bool
}

// statusNoReply is what the pinger puts on an expired call's channel.
const statusNoReply = "\x00no reply"

// Start starts the adapter and waits for its hello. The adapter is killed if it fails to say
// hello within HelloTimeout or ctx ends first.
func Start(ctx context.Context, opt Options) (*Adapter, error) {
	opt.fill()
	if len(opt.Argv) == 0 {
		return nil, fmt.Errorf("%w: no command", drivers.ErrBadOption)
	}
	cmd := exec.Command(opt.Argv[0], opt.Argv[1:]...)
	a := newAdapter(opt)
	a.cmd = cmd
	cmd.Env = append(os.Environ(), opt.Env...)
	cmd.Stderr = &a.stderr
	cmd.WaitDelay = time.Second // a child that keeps stderr open must not hold Wait
	setProcAttr(cmd)
	// Our own pipes, not cmd.StdinPipe and StdoutPipe: Wait closes the read end of the latter
	// as soon as the process exits, and run calls Wait beside the hello's read, so an adapter
	// that wrote a line and exited could have the line lost to "file already closed" before it
	// was read (CI, 2026-11-27: TestStartFailures saw no hello line where one had been
	// written); and our ends are read and written with raw system calls (rawio).
	childIn, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdout, childOut, err := os.Pipe()
	if err != nil {
		childIn.Close()
		stdinW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = childIn, childOut
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{childIn, stdinW, stdout, childOut} {
			f.Close()
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrAdapter, a.describe(), err)
	}
	// The adapter has its copies: its exit (or its closing stdout) is our EOF, and a write to
	// its stdin once it has exited fails (EPIPE) rather than wait.
	childIn.Close()
	childOut.Close()
	in, out := rawPipes(stdinW, stdout)
	wait := func() error {
		err := cmd.Wait()
		// What the adapter wrote before it exited is in the pipe for the reader. A reader still
		// blocked a WaitDelay later waits for a process the adapter started that kept stdout
		// open: the read end is closed, as Wait closes its own pipes then.
		time.AfterFunc(cmd.WaitDelay, func() { out.Close() })
		return err
	}
	return a.run(ctx, in, out, wait)
}

// rawPipes returns lockbench's ends of an adapter's stdin and stdout read and written with raw
// system calls (rawio: lockbench and the adapter take turns at the client's CPU, and each
// system call through the scheduler could wake the runtime's monitor thread), or as they are
// where that is not available.
func rawPipes(stdin, stdout *os.File) (io.WriteCloser, io.ReadCloser) {
	var in io.WriteCloser = stdin
	var out io.ReadCloser = stdout
	if r := rawio.Wrap(stdin); r != nil {
		in = r
	}
	if r := rawio.Wrap(stdout); r != nil {
		out = r
	}
	return in, out
}

// attach drives an adapter that already runs at the other end of stdin and stdout (in this
// process: tests and benchmarks); wait returns when it has ended, with its error.
func attach(ctx context.Context, opt Options, stdin io.WriteCloser, stdout io.Reader, wait func() error) (*Adapter, error) {
	opt.fill()
	return newAdapter(opt).run(ctx, stdin, stdout, wait)
}

func newAdapter(opt Options) *Adapter {
	a := &Adapter{opt: opt, quit: make(chan struct{}), exited: make(chan struct{}),
		pending: map[uint64]*call{}, dead: make(chan struct{})}
	a.calls.New = func() any { return &call{ch: make(chan Reply, 1)} }
	return a
}

// run waits for the hello, then starts the reader and the pinger.
func (a *Adapter) run(ctx context.Context, stdin io.WriteCloser, stdout io.Reader, wait func() error) (*Adapter, error) {
	a.in = stdin
	a.out = lines.New(stdin)
	go func() {
		a.waitErr = wait()
		close(a.exited)
	}()
	r := bufio.NewReaderSize(stdout, maxLine)
	helloErr := make(chan error, 1)
	go func() {
		line, err := readLine(r)
		if err == io.EOF {
			err = errors.New("end of its stdout")
		}
		if err != nil {
			helloErr <- fmt.Errorf("exited before its hello line (%v)", err)
			return
		}
		h, k, err := ParseHello(string(line))
		a.hello, a.kinds = h, k
		helloErr <- err
	}()
	t := time.NewTimer(a.opt.HelloTimeout)
	defer t.Stop()
	var err error
	select {
	case err = <-helloErr:
	case <-t.C:
		err = fmt.Errorf("no hello line within %v", a.opt.HelloTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		a.fail(err)
		<-a.exited
		return nil, a.err
	}
	go a.read(r)
	go a.ping()
	return a, nil
}

// errLong is readLine's error for a line longer than maxLine.
var errLong = fmt.Errorf("%w: a line longer than %d bytes", ErrGarbage, maxLine)

// readLine returns the next line of r without its line break; it is valid until the next read.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	switch {
	case err == bufio.ErrBufferFull:
		return nil, errLong
	case err == io.EOF && len(line) > 0:
		return nil, fmt.Errorf("%w: %q has no line break at its end", ErrGarbage, clip(string(line)))
	case err != nil:
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// Hello is what the adapter said about itself.
func (a *Adapter) Hello() Hello { return a.hello }

// Kinds are the lock kinds the adapter's hello claims.
func (a *Adapter) Kinds() drivers.Kind { return a.kinds }

// Pid is the adapter's process id, 0 for one attached to streams.
func (a *Adapter) Pid() int {
	if a.cmd == nil {
		return 0
	}
	return a.cmd.Process.Pid
}

// CPU is the CPU time the adapter process (and the children it waited for) has used so far, and
// false if the OS will not say (not Linux, or the process is gone).
func (a *Adapter) CPU() (time.Duration, bool) {
	if a.cmd == nil {
		return 0, false
	}
	return processCPU(a.cmd.Process.Pid)
}

// describe names the adapter in messages.
func (a *Adapter) describe() string {
	return fmt.Sprintf("adapter %s (%s)", a.opt.Name, strings.Join(a.opt.Argv, " "))
}

// fail ends the adapter for a reason: it is killed, and every operation waiting or to come
// fails with ErrAdapter, the reason, the exit status and the stderr tail.
func (a *Adapter) fail(reason error) {
	a.failOnce.Do(func() {
		kill(a.cmd)
		if a.in != nil {
			a.in.Close() // a request being written fails now rather than wait for the kill
		}
		status := ""
		select {
		case <-a.exited:
			if a.waitErr != nil {
				status = "; " + a.waitErr.Error()
			}
		case <-time.After(2 * time.Second):
		}
		msg := fmt.Sprintf("%s: %v%s", a.describe(), reason, status)
		if t := a.stderr.String(); t != "" {
			msg += "; its stderr ends:\n" + indent(t)
		} else {
			msg += "; its stderr was empty"
		}
		if a.closed.Load() {
			a.err = ErrClosed
		} else {
			a.err = fmt.Errorf("%w: %s", ErrAdapter, a.opt.Redact(msg))
		}
		close(a.dead)
	})
}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }

// Err is the reason the adapter failed, or nil while it runs.
func (a *Adapter) Err() error {
	select {
	case <-a.dead:
		return a.err
	default:
		return nil
	}
}

// read hands each reply to its request's caller.
func (a *Adapter) read(r *bufio.Reader) {
	var err error
	for {
		if lines.Buffered(r) {
			a.hold.Store(true)
		} else { // about to wait for the adapter: send what the batch's callers queued
			a.hold.Store(false)
			if werr := a.out.Flush(); werr != nil {
				a.fail(fmt.Errorf("writing to its stdin: %v", werr))
				return
			}
		}
		var line []byte
		if line, err = readLine(r); err != nil {
			break
		}
		id, status, msg, perr := parseReply(line)
		if perr != nil {
			a.fail(perr)
			return
		}
		a.mu.Lock()
		c := a.pending[id]
		delete(a.pending, id)
		a.mu.Unlock()
		if c == nil {
			a.fail(fmt.Errorf("%w: reply %q to no request in flight", ErrGarbage, clip(string(line))))
			return
		}
		rep := Reply{ID: id, Status: status}
		if len(msg) > 0 {
			rep.Message = string(msg)
		}
		select {
		case c.ch <- rep:
		default: // expired: its caller is gone, and the pinger's note fills the channel
		}
	}
	if errors.Is(err, ErrGarbage) {
		a.fail(err)
		return
	}
	if a.closed.Load() {
		a.fail(ErrClosed)
		return
	}
	select {
	case <-a.exited:
	case <-time.After(time.Second): // the status, if it comes soon
	}
	if err == io.EOF {
		err = errors.New("end of its stdout")
	}
	a.fail(fmt.Errorf("closed its stdout (exited?) with requests in flight: %v", err))
}

// ping checks, every PingInterval, that the adapter answers a ping within HangTimeout, and gives
// up on the replies whose deadline has passed (sweep).
func (a *Adapter) ping() {
	tick := time.NewTicker(a.opt.PingInterval)
	defer tick.Stop()
	var p *call // the ping in flight
	for {
		select {
		case <-tick.C:
		case <-a.quit:
			return
		case <-a.dead:
			return
		}
		if a.sweep(time.Now()) {
			a.fail(fmt.Errorf("did not answer a ping within %v: hung", a.opt.HangTimeout))
			return
		}
		if p != nil {
			select {
			case <-p.ch:
				a.calls.Put(p)
				p = nil
			default:
				continue // still in flight: sweep fails the adapter once it is late
			}
		}
		_, c, err := a.send(OpPing, "", "", -2, nil, a.opt.HangTimeout)
		if err != nil {
			return
		}
		p = c
	}
}

// sweep gives up on the calls whose deadline is before now: each caller gets statusNoReply. It
// reports whether one of them is a ping.
func (a *Adapter) sweep(now time.Time) (hung bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.pending {
		if c.expired || c.deadline.IsZero() || now.Before(c.deadline) {
			continue
		}
		c.expired = true
		hung = hung || c.ping
		select {
		case c.ch <- Reply{Status: statusNoReply}:
		default:
		}
	}
	return hung
}

// send queues one request, "ID OP [OWNER] [NAME] [WAIT_MS] [NAMES…]" (an empty owner or name,
// or a wait below -1, is left out), and returns its call. A timeout above zero is the call's
// deadline.
func (a *Adapter) send(op, owner, name string, waitMS int64, names []string, timeout time.Duration) (uint64, *call, error) {
	select {
	case <-a.dead:
		return 0, nil, a.err
	case <-a.quit:
		return 0, nil, ErrClosed
	default:
	}
	c := a.calls.Get().(*call)
	c.ping, c.expired, c.deadline = op == OpPing, false, time.Time{}
	if timeout > 0 {
		c.deadline = time.Now().Add(timeout)
	}
	id := a.next.Add(1)
	a.mu.Lock()
	a.pending[id] = c
	a.mu.Unlock()
	b := a.out.Begin()
	b = strconv.AppendUint(b, id, 10)
	b = append(b, ' ')
	b = append(b, op...)
	if owner != "" {
		b = append(append(b, ' '), owner...)
	}
	if name != "" {
		b = append(append(b, ' '), name...)
	}
	if waitMS >= -1 {
		b = strconv.AppendInt(append(b, ' '), waitMS, 10)
	}
	for _, n := range names {
		b = append(append(b, ' '), n...)
	}
	b = append(b, '\n')
	err := a.out.End(b, !a.hold.Load())
	if err == nil && !a.hold.Load() {
		// The reader may have flushed between End and here, having set hold before this load
		// saw it: then nobody would write the line. Loaded after End, hold false means the
		// reader's flush is yet to come or this goroutine writes.
		err = a.out.Flush()
	}
	if err != nil {
		a.fail(fmt.Errorf("writing to its stdin: %v", err))
		return 0, nil, a.err
	}
	return id, c, nil
}

// ErrNoReply is wrapped when a release or a cancelled acquire got no reply within ReplyTimeout.
var ErrNoReply = errors.New("extdriver: no reply")

// await waits for c's reply or the adapter's failure. A call that got its reply goes back to
// the pool; one given up on (statusNoReply, ReplyTimeout after it was sent) stays registered, so
// that its reply, if it comes later, is dropped.
func (a *Adapter) await(c *call) (Reply, error) {
	select {
	case r := <-c.ch:
		if r.Status == statusNoReply {
			return Reply{}, fmt.Errorf("%w from %s within %v (it answers pings: its library is stuck?)", ErrNoReply, a.opt.Name, a.opt.ReplyTimeout)
		}
		a.calls.Put(c)
		return r, nil
	case <-a.dead:
		return Reply{}, a.err
	case <-a.quit:
		return Reply{}, ErrClosed
	}
}

// Acquire asks for lock name for owner, waiting at most wait (negative: until ctx ends). It
// returns true when granted, false with a nil error when the wait ran out, and ctx's error when
// ctx ended first (after releasing a grant that won the race with the cancel). Errors wrap
// ErrLibrary (the adapter said error), ErrAdapter or ErrClosed.
func (a *Adapter) Acquire(ctx context.Context, owner, name string, wait time.Duration) (bool, error) {
	ok, _, err := a.acquire(ctx, OpAcquire, owner, name, nil, wait)
	return ok, err
}

// AcquireRead is Acquire of a read hold of the read-write lock name (kind rw).
func (a *Adapter) AcquireRead(ctx context.Context, owner, name string, wait time.Duration) (bool, error) {
	ok, _, err := a.acquire(ctx, OpAcquireRead, owner, name, nil, wait)
	return ok, err
}

// AcquireWrite is Acquire of the write lock of the read-write lock name (kind rw).
func (a *Adapter) AcquireWrite(ctx context.Context, owner, name string, wait time.Duration) (bool, error) {
	ok, _, err := a.acquire(ctx, OpAcquireWrite, owner, name, nil, wait)
	return ok, err
}

// AcquireMulti is Acquire of every lock in names, all or nothing (kind multi).
func (a *Adapter) AcquireMulti(ctx context.Context, owner string, names []string, wait time.Duration) (bool, error) {
	if len(names) == 0 {
		return false, fmt.Errorf("%w: a multi-lock of no names", drivers.ErrBadOption)
	}
	ok, _, err := a.acquire(ctx, OpAcquireMulti, owner, "", names, wait)
	return ok, err
}

// AcquireFenced is Acquire of a fenced lock (kind fenced), returning the grant's token.
func (a *Adapter) AcquireFenced(ctx context.Context, owner, name string, wait time.Duration) (bool, int64, error) {
	return a.acquire(ctx, OpAcquireFenced, owner, name, nil, wait)
}

// releaseOp is the release that undoes the acquire op.
func releaseOp(op string) string {
	switch op {
	case OpAcquireRead:
		return OpReleaseRead
	case OpAcquireWrite:
		return OpReleaseWrite
	case OpAcquireMulti:
		return OpReleaseMulti
	}
	return OpRelease
}

// acquire sends the acquire op: "ID OP OWNER NAME WAIT_MS", or for macquire
// "ID macquire OWNER WAIT_MS NAMES…". The token is that of a fenced grant.
func (a *Adapter) acquire(ctx context.Context, op, owner, name string, names []string, wait time.Duration) (bool, int64, error) {
	if err := checkFields(owner, name, names); err != nil {
		return false, 0, err
	}
	ms := int64(-1)
	if wait >= 0 {
		ms = wait.Milliseconds()
	}
	var id uint64
	var c *call
	var err error
	if op == OpAcquireMulti {
		id, c, err = a.send(op, owner, "", ms, names, 0)
	} else {
		id, c, err = a.send(op, owner, name, ms, nil, 0)
	}
	if err != nil {
		return false, 0, err
	}
	var r Reply
	select {
	case r = <-c.ch:
		a.calls.Put(c)
	case <-a.dead:
		return false, 0, a.err
	case <-a.quit:
		return false, 0, ErrClosed
	case <-ctx.Done():
		if r, err := a.cancel(id, c); err == nil && r.Status == StatusOK {
			_ = a.release(releaseOp(op), owner, name, names) // the grant won the race: give it back
		}
		return false, 0, ctx.Err()
	}
	switch r.Status {
	case StatusOK:
		if op != OpAcquireFenced {
			return true, 0, nil
		}
		token, err := strconv.ParseInt(r.Message, 10, 64)
		if err != nil {
			a.fail(fmt.Errorf("%w: %q to facquire: no token after ok", ErrGarbage, clip(r.Message)))
			return false, 0, a.err
		}
		return true, token, nil
	case StatusTimeout:
		return false, 0, nil
	case StatusError:
		return false, 0, fmt.Errorf("%w: %s %s: %s", ErrLibrary, op, lockNames(name, names), a.opt.Redact(r.Message))
	}
	a.fail(fmt.Errorf("%w: %q to %s", ErrGarbage, r.Status, op))
	return false, 0, a.err
}

// checkFields refuses an owner or lock name a request line cannot carry.
func checkFields(owner, name string, names []string) error {
	ok := validField(owner) && (names != nil || validField(name))
	for _, n := range names {
		ok = ok && validField(n)
	}
	if !ok {
		return fmt.Errorf("%w: owner %q or lock name %q is empty or has a space or line break", drivers.ErrBadOption, owner, lockNames(name, names))
	}
	return nil
}

func lockNames(name string, names []string) string {
	if names != nil {
		return strings.Join(names, ",")
	}
	return name
}

// cancel stops acquire id, whose reply comes on c, and returns its reply. The adapter answers
// pings meanwhile, so this wait is bounded by HangTimeout, and by ReplyTimeout if its library
// is stuck.
func (a *Adapter) cancel(id uint64, c *call) (Reply, error) {
	a.mu.Lock()
	_, waiting := a.pending[id]
	if waiting {
		c.deadline = time.Now().Add(a.opt.ReplyTimeout)
	}
	a.mu.Unlock()
	if waiting { // else answered meanwhile: the reply is in c.ch
		b := a.out.Begin()
		b = strconv.AppendUint(b, id, 10)
		b = append(append(b, ' '), OpCancel...)
		if err := a.out.End(append(b, '\n'), true); err != nil {
			a.fail(fmt.Errorf("writing to its stdin: %v", err))
		}
	}
	return a.await(c)
}

// Release releases one hold of name by owner. Errors wrap drivers.ErrNotHeld (the adapter said
// notowner), ErrNoReply, ErrLibrary, ErrAdapter or ErrClosed.
func (a *Adapter) Release(owner, name string) error { return a.release(OpRelease, owner, name, nil) }

// ReleaseRead releases one read hold of the read-write lock name, as Release.
func (a *Adapter) ReleaseRead(owner, name string) error {
	return a.release(OpReleaseRead, owner, name, nil)
}

// ReleaseWrite releases the write lock of the read-write lock name, as Release.
func (a *Adapter) ReleaseWrite(owner, name string) error {
	return a.release(OpReleaseWrite, owner, name, nil)
}

// ReleaseMulti releases the locks names taken by one AcquireMulti, as Release.
func (a *Adapter) ReleaseMulti(owner string, names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("%w: a multi-lock of no names", drivers.ErrBadOption)
	}
	return a.release(OpReleaseMulti, owner, "", names)
}

func (a *Adapter) release(op, owner, name string, names []string) error {
	if err := checkFields(owner, name, names); err != nil {
		return err
	}
	_, c, err := a.send(op, owner, name, -2, names, a.opt.ReplyTimeout)
	if err != nil {
		return err
	}
	r, err := a.await(c)
	if err != nil {
		return err
	}
	switch r.Status {
	case StatusOK:
		return nil
	case StatusNotOwner:
		return fmt.Errorf("%w: %s: %s", drivers.ErrNotHeld, lockNames(name, names), a.opt.Redact(r.Message))
	case StatusError:
		return fmt.Errorf("%w: %s %s: %s", ErrLibrary, op, lockNames(name, names), a.opt.Redact(r.Message))
	}
	a.fail(fmt.Errorf("%w: %q to %s", ErrGarbage, r.Status, op))
	return a.err
}

// Close closes the adapter's stdin and waits ShutdownGrace for it to exit; one that does not,
// or exits with a non-zero status, is an error (and is killed). Safe to call more than once.
func (a *Adapter) Close() error {
	a.closeMu.Lock()
	defer a.closeMu.Unlock()
	if a.closed.Swap(true) {
		return a.closeErr
	}
	if err := a.Err(); err != nil {
		a.closeErr = err
		return err
	}
	close(a.quit)
	a.in.Close() // end of input: the adapter's cue to exit
	t := time.NewTimer(a.opt.ShutdownGrace)
	defer t.Stop()
	msg := ""
	select {
	case <-a.exited:
		if a.waitErr != nil {
			msg = fmt.Sprintf("%s: after its stdin closed: %v%s", a.describe(), a.waitErr, a.stderrNote())
		}
	case <-t.C:
		kill(a.cmd)
		<-a.exited
		msg = fmt.Sprintf("%s: still running %v after its stdin closed; killed%s", a.describe(), a.opt.ShutdownGrace, a.stderrNote())
	}
	a.fail(ErrClosed)
	if msg != "" {
		a.closeErr = fmt.Errorf("%w: %s", ErrAdapter, a.opt.Redact(msg))
	}
	return a.closeErr
}

func (a *Adapter) stderrNote() string {
	if t := a.stderr.String(); t != "" {
		return "; its stderr ends:\n" + indent(t)
	}
	return ""
}
