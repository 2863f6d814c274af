package netem

import (
	"math/rand/v2"
	"time"

	"github.com/Shopify/toxiproxy/v2/toxics"
)

// Toxic type names, registered with toxiproxy in init.
const (
	delayToxicType = "lockbench_delay"
	stallToxicType = "lockbench_stall"
)

func init() {
	toxics.Register(delayToxicType, new(delayToxic))
	toxics.Register(stallToxicType, new(stallToxic))
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

// stallToxic passes nothing while it is in the chain, and reads nothing either: bytes wait in
// the proxy's channels and then in the kernel's socket buffers, as they would behind a network
// that lost every packet while TCP retransmits. When it is removed toxiproxy flushes what
// waited, so a connection that outlives the partition gets its bytes late, not lost (toxiproxy's
// timeout toxic would drop them, which no real network does to a live TCP connection).
type stallToxic struct{}

func (t *stallToxic) Pipe(stub *toxics.ToxicStub) { <-stub.Interrupt }
