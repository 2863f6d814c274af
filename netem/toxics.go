package netem

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Shopify/toxiproxy/v2/stream"
	"github.com/Shopify/toxiproxy/v2/toxics"
)

// Toxic type names, registered with toxiproxy in init.
const (
	delayToxicType = "lockbench_delay"
	faultToxicType = "lockbench_fault"
)

func init() {
	toxics.Register(delayToxicType, new(delayToxic))
	toxics.Register(faultToxicType, new(faultToxic))
}

// delayToxic holds every chunk until Latency ± Jitter after the proxy read it, in order. It is
// toxiproxy's latency toxic at nanosecond resolution: that one counts whole milliseconds, which
// cannot say 200us of jitter or 500us of latency. Fields are JSON because toxiproxy builds
// toxics from JSON.
type delayToxic struct {
	LatencyNS int64 `json:"latency_ns"`
	JitterNS  int64 `json:"jitter_ns"`
}

// GetBufferSize lets chunks queue behind the one being delayed, as toxiproxy's latency toxic
// does, so that a delay does not also cap throughput: pipelined commands are delayed together.
func (t *delayToxic) GetBufferSize() int { return 1024 }

func (t *delayToxic) delay() time.Duration {
	d := t.LatencyNS
	if t.JitterNS > 0 {
		d += rand.Int64N(2*t.JitterNS+1) - t.JitterNS
	}
	return time.Duration(d)
}

// precise is how much of a delay delayToxic waits on its sleeper: the end of every delay, where
// a Go timer could be a millisecond late (see sleeper). The rest, if any, it waits on a timer
// it can interrupt.
const precise = 2 * time.Millisecond

func (t *delayToxic) Pipe(stub *toxics.ToxicStub) {
	s := newSleeper()
	defer s.close()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			due := c.Timestamp.Add(t.delay())
			if wait := time.Until(due) - precise; wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-stub.Interrupt:
					timer.Stop()
					stub.Output <- c // toxiproxy's rule: never drop a byte
					return
				}
			}
			s.sleep(time.Until(due))
			stub.Output <- c
		}
	}
}

// faultToxic is the last toxic on each direction of every proxy. It passes, holds or drops the
// bytes as its faultCtl says now; it cuts its connection when the ctl severs the connections
// open before, and when bytes would pass again on a link that dropped some. One toxic that changes what it does, rather than toxics added and removed, because
// toxiproxy forgets a link once its connection closes: a stall toxic removed after that would
// keep the bytes it held and the goroutines behind them forever, so a partitioned connection
// could never be severed. Fields are JSON because toxiproxy builds toxics from JSON; Ctl names a
// faultCtl in the registry (see newFaultCtl).
type faultToxic struct {
	Ctl        uint64 `json:"ctl"`
	Downstream bool   `json:"downstream"` // server to client; false: client to server
}

// NewState joins the link starting now to its proxy's connections, so that a Sever from now
// on cuts it. toxiproxy calls it once per link, when the connection is accepted.
func (t *faultToxic) NewState() any {
	ctl := lookupFaultCtl(t.Ctl)
	if ctl == nil {
		return nil
	}
	return ctl.join()
}

func (t *faultToxic) Pipe(stub *toxics.ToxicStub) {
	l, _ := stub.State.(*faultLink)
	if l == nil { // the Net closed before this link started
		new(toxics.NoopToxic).Pipe(stub)
		return
	}
	dir := stream.Upstream
	if t.Downstream {
		dir = stream.Downstream
	}
	// c is a chunk read and neither passed nor dropped yet. What to do with it is decided by
	// the flow after it was read, so that bytes sent after Partition or DropReplies returns
	// are held or dropped, never passed by a decision taken before.
	var c *stream.StreamChunk
	// dropped says the link discarded bytes: its stream is out of step (a RESP client would
	// match the next reply to the oldest command waiting), so it must never pass another byte.
	dropped := false
	for {
		select {
		case <-l.epoch.severed: // before anything else: a severed link passes nothing more
			l.cut(stub)
			return
		default:
		}
		s := l.ctl.state.Load()
		f := s.flows[dir]
		if f == drop && c != nil {
			c, dropped = nil, true
		}
		if dropped && f == pass {
			l.cut(stub)
			return
		}
		in, out := stub.Input, stub.Output
		if c != nil || f == hold {
			in = nil // hold reads nothing: bytes wait in the channels, then in the kernel
		}
		if c == nil || f == hold {
			out = nil
		}
		select {
		case <-stub.Interrupt:
			if c != nil {
				stub.Output <- c // toxiproxy's rule: never drop a byte
			}
			return
		case <-l.epoch.severed:
			l.cut(stub)
			return
		case <-s.changed:
		case c = <-in:
			if c == nil {
				l.end(stub)
				return
			}
		case out <- c:
			c = nil
		}
	}
}

// flow is what a faultToxic does with the bytes of one direction.
type flow uint8

const (
	pass flow = iota // forward them
	hold             // read nothing: bytes wait, and arrive when the flow passes again
	drop             // read and discard them
)

// faultCtl says what the faultToxics of one proxy do, and severs its connections. Its methods
// are safe for concurrent use.
type faultCtl struct {
	id    uint64
	state atomic.Pointer[faultState] // replaced, never changed, so Pipe reads it without a lock

	mu     sync.Mutex // guards what follows, and serializes writers of state
	epoch  *epoch     // the links a Sever now would cut
	closed bool
}

// faultState is the flow of each direction, by stream.Direction.
type faultState struct {
	flows   [stream.NumDirections]flow
	changed chan struct{} // closed when this state is replaced
}

// epoch is the links started between two Severs.
type epoch struct {
	severed chan struct{} // closed by Sever: every link of the epoch cuts its connection
	links   int           // links joined and not yet cut or ended; guarded by faultCtl.mu
	gone    chan struct{} // closed once severed with no links left
}

func newEpoch() *epoch { return &epoch{severed: make(chan struct{}), gone: make(chan struct{})} }

// faultLink is a faultToxic's state on one link: its ctl, and the epoch it started in.
type faultLink struct {
	ctl   *faultCtl
	epoch *epoch
}

// faultCtls is the registry faultToxics find their ctl in by id: toxiproxy builds a toxic from
// JSON, which cannot carry a pointer.
var faultCtls = struct {
	sync.Mutex
	last uint64
	byID map[uint64]*faultCtl
}{byID: make(map[uint64]*faultCtl)}

// newFaultCtl returns a registered faultCtl that passes everything, until close.
func newFaultCtl() *faultCtl {
	c := &faultCtl{epoch: newEpoch()}
	c.state.Store(&faultState{changed: make(chan struct{})})
	faultCtls.Lock()
	defer faultCtls.Unlock()
	faultCtls.last++
	c.id = faultCtls.last
	faultCtls.byID[c.id] = c
	return c
}

func lookupFaultCtl(id uint64) *faultCtl {
	faultCtls.Lock()
	defer faultCtls.Unlock()
	return faultCtls.byID[id]
}

// set makes the faultToxics of each direction do what up and down say, from the next chunk
// each reads.
func (c *faultCtl) set(up, down flow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.state.Load()
	if old.flows == [stream.NumDirections]flow{up, down} {
		return
	}
	c.state.Store(&faultState{flows: [stream.NumDirections]flow{up, down}, changed: make(chan struct{})})
	close(old.changed)
}

// join returns the state of a link starting now.
func (c *faultCtl) join() *faultLink {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch.links++
	return &faultLink{ctl: c, epoch: c.epoch}
}

// leave counts a link of e as cut or ended. The caller holds c.mu.
func (c *faultCtl) leave(e *epoch) {
	e.links--
	// A link can join an epoch close already severed (none should: the proxy is stopped
	// first), so gone may be closed already.
	if e.links == 0 && isClosed(e.severed) && !isClosed(e.gone) {
		close(e.gone)
	}
}

// sever makes the links started so far cut their connections, and waits up to wait for all of
// them to have done so; links starting later are not touched. It does nothing after close.
func (c *faultCtl) sever(wait time.Duration) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	e := c.epoch
	c.endEpoch()
	c.epoch = newEpoch()
	c.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-e.gone:
		return nil
	case <-t.C:
		return fmt.Errorf("connections still open %v after they were severed", wait)
	}
}

// endEpoch severs the current epoch. The caller holds c.mu.
func (c *faultCtl) endEpoch() {
	close(c.epoch.severed)
	if c.epoch.links == 0 {
		close(c.epoch.gone)
	}
}

// close severs every link, now and for good, and unregisters c. Its proxy must be stopped first
// (no link may start after): this frees the goroutines of links that were holding bytes or
// blocked writing to a socket the stop closed.
func (c *faultCtl) close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		c.endEpoch()
	}
	c.mu.Unlock()
	faultCtls.Lock()
	delete(faultCtls.byID, c.id)
	faultCtls.Unlock()
}

// cut closes the link's output, which makes toxiproxy close the socket it writes to, and then
// reads and discards its input until the other end of the connection closes too, so that
// nothing upstream of it in the chain blocks.
func (l *faultLink) cut(stub *toxics.ToxicStub) {
	l.end(stub)
	for range stub.Input {
	}
}

// end closes the link's output and counts the link as gone.
func (l *faultLink) end(stub *toxics.ToxicStub) {
	stub.Close()
	l.ctl.mu.Lock()
	l.ctl.leave(l.epoch)
	l.ctl.mu.Unlock()
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
