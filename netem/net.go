package netem

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// ErrClosed is returned by Dial and by every fault (Partition, Heal, ...) after Close.
var ErrClosed = errors.New("netem: closed")

// Net is a set of in-process proxies that put Conditions on every connection made through
// Dial. It is safe for concurrent use.
type Net struct {
	cond Conditions
	srv  *toxiproxy.ApiServer

	mu      sync.Mutex
	proxies map[string]*proxy // by upstream address
	closed  bool

	done chan struct{}  // closed by Close: background heals (Pause) give up
	bg   sync.WaitGroup // background heals, waited for by Close
}

// proxy is one toxiproxy Proxy in front of one upstream address.
type proxy struct {
	p     *toxiproxy.Proxy
	ctl   *faultCtl // drives the faultToxics on both directions
	dials atomic.Int64

	// The faults on the upstream address, guarded by Net.mu (see faults.go).
	partitioned bool
	replies     flow   // what happens to replies when not partitioned
	heals       uint64 // Heals so far, so that a Pause ends only the partition it made
}

// New returns a Net that puts c on every connection. It starts nothing until the first Dial.
func New(c Conditions) *Net {
	return &Net{
		cond:    c,
		srv:     toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		proxies: make(map[string]*proxy),
		done:    make(chan struct{}),
	}
}

// Conditions returns the conditions n puts on connections.
func (n *Net) Conditions() Conditions { return n.cond }

// Dial connects to addr through n's proxy for addr, starting the proxy if it is the first
// connection to addr. It has the signature of go-redis' Options.Dialer. network must be tcp,
// tcp4 or tcp6; ctx bounds the dial to the proxy (the proxy dials addr when it accepts, so a
// dead addr shows up as a connection the proxy closes at once).
func (n *Net) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("netem: dial %s %s: only tcp is proxied", network, addr)
	}
	p, err := n.proxy(addr)
	if err != nil {
		return nil, err
	}
	p.dials.Add(1)
	var d net.Dialer
	return d.DialContext(ctx, "tcp", p.p.Listen)
}

// proxy returns the started proxy in front of addr, starting it on first use, with the
// conditions on both directions and then a faultToxic, which passes everything until a fault
// says otherwise.
func (n *Net) proxy(addr string) (*proxy, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrClosed
	}
	if p := n.proxies[addr]; p != nil {
		return p, nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return nil, fmt.Errorf("netem: %w", err)
	}
	tp := toxiproxy.NewProxy(n.srv, addr, "127.0.0.1:0", addr)
	if err := tp.Start(); err != nil {
		return nil, fmt.Errorf("netem: proxy for %s: %w", addr, err)
	}
	p := &proxy{p: tp, ctl: newFaultCtl()}
	for _, dir := range []string{"upstream", "downstream"} {
		delay := fmt.Sprintf(`{"latency_ns":%d,"jitter_ns":%d}`, n.cond.Latency.Nanoseconds(), n.cond.Jitter.Nanoseconds())
		fault := fmt.Sprintf(`{"ctl":%d,"downstream":%t}`, p.ctl.id, dir == "downstream")
		err := addToxic(tp, delayToxicType, dir, delay)
		if err == nil {
			err = addToxic(tp, faultToxicType, dir, fault)
		}
		if err != nil {
			tp.Stop()
			p.ctl.close()
			return nil, fmt.Errorf("netem: proxy for %s: %w", addr, err)
		}
	}
	n.proxies[addr] = p
	return p, nil
}

// addToxic adds a toxic of type typ on direction dir ("upstream": client to server,
// "downstream": back) of tp, named after both, with the JSON attributes attrs.
func addToxic(tp *toxiproxy.Proxy, typ, dir, attrs string) error {
	body := fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":%s}`, typ+"_"+dir, typ, dir, attrs)
	_, err := tp.Toxics.AddToxicJson(strings.NewReader(body))
	return err
}

// ProxyStats describes one proxy of a Net.
type ProxyStats struct {
	// Upstream is the address the proxy forwards to; Listen is where it listens.
	Upstream, Listen string
	// Dials is the connections made through Dial to Upstream.
	Dials int64
	// Partitioned says whether Upstream is partitioned now.
	Partitioned bool
	// DroppingReplies and StallingReplies say whether DropReplies or StallReplies is in force
	// on Upstream now (under a partition too).
	DroppingReplies, StallingReplies bool
}

// Stats describes every proxy started so far, sorted by upstream address.
func (n *Net) Stats() []ProxyStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]ProxyStats, 0, len(n.proxies))
	for addr, p := range n.proxies {
		out = append(out, ProxyStats{
			Upstream: addr, Listen: p.p.Listen, Dials: p.dials.Load(),
			Partitioned: p.partitioned, DroppingReplies: p.replies == drop, StallingReplies: p.replies == hold,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Upstream < out[j].Upstream })
	return out
}

// Close stops every proxy, closes the connections through them, dropping whatever a fault was
// holding, and waits for the heals Pause scheduled to give up. Later calls do nothing.
func (n *Net) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	close(n.done)
	for _, p := range n.proxies {
		p.p.Stop()
		// After Stop, so that no link starts uncut: frees the goroutines of links that held
		// bytes, or were writing to a socket Stop closed.
		p.ctl.close()
	}
	n.mu.Unlock()
	n.bg.Wait()
	return nil
}
