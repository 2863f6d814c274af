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
type Adapter struct {
	opt   Options
	cmd   *exec.Cmd
	hello Hello
	kinds drivers.Kind

	stderr  tail
	out     chan []byte // request lines for the writer
	quit    chan struct{}
	exited  chan struct{} // closed when the process has been waited for
	waitErr error

	next    atomic.Uint64
	mu      sync.Mutex
	pending map[uint64]chan Reply

	dead     chan struct{} // closed by fail; err is set before
	err      error
	failOnce sync.Once
	closed   atomic.Bool
	closeErr error
	closeMu  sync.Mutex
}

// Start starts the adapter and waits for its hello. The adapter is killed if it fails to say
// hello within HelloTimeout or ctx ends first.
func Start(ctx context.Context, opt Options) (*Adapter, error) {
	opt.fill()
	if len(opt.Argv) == 0 {
		return nil, fmt.Errorf("%w: no command", drivers.ErrBadOption)
	}
	a := &Adapter{opt: opt, out: make(chan []byte, 1024), quit: make(chan struct{}), exited: make(chan struct{}),
		pending: map[uint64]chan Reply{}, dead: make(chan struct{})}
	a.cmd = exec.Command(opt.Argv[0], opt.Argv[1:]...)
	a.cmd.Env = append(os.Environ(), opt.Env...)
	a.cmd.Stderr = &a.stderr
	a.cmd.WaitDelay = time.Second // a child that keeps stderr open must not hold Wait
	setProcAttr(a.cmd)
	stdin, err := a.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := a.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := a.cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrAdapter, a.describe(), err)
	}
	go func() {
		a.waitErr = a.cmd.Wait()
		close(a.exited)
	}()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 4096), maxLine)
	helloErr := make(chan error, 1)
	go func() {
		if !lines.Scan() {
			helloErr <- fmt.Errorf("exited before its hello line (%v)", scanErr(lines))
			return
		}
		h, k, err := ParseHello(lines.Text())
		a.hello, a.kinds = h, k
		helloErr <- err
	}()
	t := time.NewTimer(opt.HelloTimeout)
	defer t.Stop()
	select {
	case err = <-helloErr:
	case <-t.C:
		err = fmt.Errorf("no hello line within %v", opt.HelloTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		a.fail(err)
		<-a.exited
		return nil, a.err
	}
	go a.read(lines)
	go a.write(stdin)
	go a.ping()
	return a, nil
}

func scanErr(s *bufio.Scanner) string {
	if s.Err() != nil {
		return s.Err().Error()
	}
	return "end of its stdout"
}

// Hello is what the adapter said about itself.
func (a *Adapter) Hello() Hello { return a.hello }

// Kinds are the lock kinds the adapter's hello claims.
func (a *Adapter) Kinds() drivers.Kind { return a.kinds }

// Pid is the adapter's process id.
func (a *Adapter) Pid() int { return a.cmd.Process.Pid }

// CPU is the CPU time the adapter process (and the children it waited for) has used so far, and
// false if the OS will not say (not Linux, or the process is gone).
func (a *Adapter) CPU() (time.Duration, bool) { return processCPU(a.cmd.Process.Pid) }

// describe names the adapter in messages.
func (a *Adapter) describe() string {
	return fmt.Sprintf("adapter %s (%s)", a.opt.Name, strings.Join(a.opt.Argv, " "))
}

// fail ends the adapter for a reason: it is killed, and every operation waiting or to come
// fails with ErrAdapter, the reason, the exit status and the stderr tail.
func (a *Adapter) fail(reason error) {
	a.failOnce.Do(func() {
		kill(a.cmd)
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

// read hands each reply to its request's waiter.
func (a *Adapter) read(lines *bufio.Scanner) {
	for lines.Scan() {
		r, err := ParseReply(lines.Text())
		if err != nil {
			a.fail(err)
			return
		}
		a.mu.Lock()
		ch, ok := a.pending[r.ID]
		delete(a.pending, r.ID)
		a.mu.Unlock()
		if !ok {
			a.fail(fmt.Errorf("%w: reply %q to no request in flight", ErrGarbage, clip(lines.Text())))
			return
		}
		ch <- r
	}
	if a.closed.Load() {
		a.fail(ErrClosed)
		return
	}
	select {
	case <-a.exited:
	case <-time.After(time.Second): // the status, if it comes soon
	}
	a.fail(fmt.Errorf("closed its stdout (exited?) with requests in flight: %v", scanErr(lines)))
}

// write sends the queued requests, many per write when they queue up.
func (a *Adapter) write(stdin io.WriteCloser) {
	defer stdin.Close()
	w := bufio.NewWriterSize(stdin, 64<<10)
	for {
		select {
		case b := <-a.out:
			w.Write(b)
			for n := len(a.out); n > 0; n-- {
				w.Write(<-a.out)
			}
			if err := w.Flush(); err != nil {
				a.fail(fmt.Errorf("writing to its stdin: %v", err))
				return
			}
		case <-a.quit:
			return
		case <-a.dead:
			return
		}
	}
}

// ping checks, every PingInterval, that the adapter answers within HangTimeout.
func (a *Adapter) ping() {
	tick := time.NewTicker(a.opt.PingInterval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-a.quit:
			return
		case <-a.dead:
			return
		}
		hung := time.NewTimer(a.opt.HangTimeout)
		ch, err := a.send(hung.C, OpPing)
		if err == nil {
			select {
			case <-ch:
			case <-hung.C:
				err = errHung
			case <-a.quit:
			case <-a.dead:
			}
		}
		hung.Stop()
		if errors.Is(err, errHung) {
			a.fail(fmt.Errorf("did not answer a ping within %v: hung", a.opt.HangTimeout))
			return
		}
	}
}

var errHung = errors.New("hung")

// send queues one request and returns where its reply will come. give, when it fires before
// the request is queued, gives up with errHung.
func (a *Adapter) send(give <-chan time.Time, op string, args ...string) (chan Reply, error) {
	_, ch, err := a.sendOp(give, op, args...)
	return ch, err
}

// sendOp is send, returning the request's id too.
func (a *Adapter) sendOp(give <-chan time.Time, op string, args ...string) (uint64, chan Reply, error) {
	id := a.next.Add(1)
	ch := make(chan Reply, 1)
	a.mu.Lock()
	a.pending[id] = ch
	a.mu.Unlock()
	b := appendRequest(make([]byte, 0, 64), id, op, args...)
	var err error
	select {
	case a.out <- b:
		return id, ch, nil
	case <-give:
		err = errHung
	case <-a.dead:
		err = a.err
	case <-a.quit:
		err = ErrClosed
	}
	a.mu.Lock()
	delete(a.pending, id)
	a.mu.Unlock()
	return 0, nil, err
}

// sendID queues a request for an id already in flight (cancel).
func (a *Adapter) sendID(id uint64, op string) {
	select {
	case a.out <- appendRequest(make([]byte, 0, 32), id, op):
	case <-a.dead:
	case <-a.quit:
	}
}

// ErrNoReply is wrapped when a release or a cancelled acquire got no reply within ReplyTimeout.
var ErrNoReply = errors.New("extdriver: no reply")

// await waits for the reply on ch, or the adapter's failure, at most ReplyTimeout. A reply that
// comes later finds its buffered channel still registered, and is dropped with it.
func (a *Adapter) await(ch chan Reply) (Reply, error) {
	t := time.NewTimer(a.opt.ReplyTimeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r, nil
	case <-a.dead:
		return Reply{}, a.err
	case <-a.quit:
		return Reply{}, ErrClosed
	case <-t.C:
		return Reply{}, fmt.Errorf("%w from %s within %v (it answers pings: its library is stuck?)", ErrNoReply, a.opt.Name, a.opt.ReplyTimeout)
	}
}

// Acquire asks for lock name for owner, waiting at most wait (negative: until ctx ends). It
// returns true when granted, false with a nil error when the wait ran out, and ctx's error when
// ctx ended first (after releasing a grant that won the race with the cancel). Errors wrap
// ErrLibrary (the adapter said error), ErrAdapter or ErrClosed.
func (a *Adapter) Acquire(ctx context.Context, owner, name string, wait time.Duration) (bool, error) {
	if !validField(owner) || !validField(name) {
		return false, fmt.Errorf("%w: owner %q or lock name %q is empty or has a space or line break", drivers.ErrBadOption, owner, name)
	}
	ms := int64(-1)
	if wait >= 0 {
		ms = wait.Milliseconds()
	}
	id, ch, err := a.sendOp(nil, OpAcquire, owner, name, strconv.FormatInt(ms, 10))
	if err != nil {
		return false, err
	}
	var r Reply
	select {
	case r = <-ch:
	case <-a.dead:
		return false, a.err
	case <-a.quit:
		return false, ErrClosed
	case <-ctx.Done():
		if r, err := a.cancel(id, ch); err == nil && r.Status == StatusOK {
			_ = a.Release(owner, name) // the grant won the race: give it back
		}
		return false, ctx.Err()
	}
	switch r.Status {
	case StatusOK:
		return true, nil
	case StatusTimeout:
		return false, nil
	case StatusError:
		return false, fmt.Errorf("%w: acquire %s: %s", ErrLibrary, name, a.opt.Redact(r.Message))
	}
	a.fail(fmt.Errorf("%w: %q to acquire", ErrGarbage, r.Status))
	return false, a.err
}

// cancel stops acquire id, whose reply comes on ch, and returns its reply. The adapter answers
// pings meanwhile, so this wait is bounded by HangTimeout.
func (a *Adapter) cancel(id uint64, ch chan Reply) (Reply, error) {
	a.mu.Lock()
	_, waiting := a.pending[id]
	a.mu.Unlock()
	if waiting { // else answered meanwhile: the reply is in ch
		a.sendID(id, OpCancel)
	}
	return a.await(ch)
}

// Release releases one hold of name by owner. Errors wrap drivers.ErrNotHeld (the adapter said
// notowner), ErrLibrary, ErrAdapter or ErrClosed.
func (a *Adapter) Release(owner, name string) error {
	ch, err := a.send(nil, OpRelease, owner, name)
	if err != nil {
		return err
	}
	r, err := a.await(ch)
	if err != nil {
		return err
	}
	switch r.Status {
	case StatusOK:
		return nil
	case StatusNotOwner:
		return fmt.Errorf("%w: %s: %s", drivers.ErrNotHeld, name, a.opt.Redact(r.Message))
	case StatusError:
		return fmt.Errorf("%w: release %s: %s", ErrLibrary, name, a.opt.Redact(r.Message))
	}
	a.fail(fmt.Errorf("%w: %q to release", ErrGarbage, r.Status))
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
