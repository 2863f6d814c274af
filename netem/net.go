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

// ErrClosed is returned by Dial, Partition and Heal after Close.
var ErrClosed = errors.New("netem: closed")

// Net is a set of in-process proxies that put Conditions on every connection made through
// Dial. It is safe for concurrent use.
type Net struct {
	cond Conditions
	srv  *toxiproxy.ApiServer

	mu      sync.Mutex
	proxies map[string]*proxy // by upstream address
	closed  bool
}

// proxy is one toxiproxy Proxy in front of one upstream address.
type proxy struct {
	p           *toxiproxy.Proxy
	dials       atomic.Int64
	partitioned bool // guarded by Net.mu
}

// New returns a Net that puts c on every connection. It starts nothing until the first Dial.
func New(c Conditions) *Net {
	return &Net{
		cond:    c,
		srv:     toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		proxies: make(map[string]*proxy),
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
// conditions on both directions and a partition already in place if addr is partitioned.
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
	p := &proxy{p: tp}
	for _, dir := range []string{"upstream", "downstream"} {
		attrs := fmt.Sprintf(`{"latency_ns":%d,"jitter_ns":%d}`, n.cond.Latency.Nanoseconds(), n.cond.Jitter.Nanoseconds())
		if err := addToxic(tp, delayToxicType, dir, attrs); err != nil {
			tp.Stop()
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

// Partition silences addr in both directions, for connections open now and made later: bytes
// sent either way wait, as behind a network that drops every packet, until Heal. Clients see
// replies stop coming, not closed connections; their read timeouts decide what happens. It
// starts addr's proxy if no connection has been made to addr yet. Partitioning a partitioned
// addr does nothing.
func (n *Net) Partition(addr string) error {
	p, err := n.proxy(addr)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrClosed
	}
	if p.partitioned {
		return nil
	}
	for _, dir := range []string{"upstream", "downstream"} {
		if err := addToxic(p.p, stallToxicType, dir, "{}"); err != nil {
			return fmt.Errorf("netem: partition %s: %w", addr, err)
		}
	}
	p.partitioned = true
	return nil
}

// Heal ends a partition of addr: what waited is delivered, on the connections still open. Healing
// an addr that is not partitioned does nothing.
func (n *Net) Heal(addr string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrClosed
	}
	p := n.proxies[addr]
	if p == nil || !p.partitioned {
		return nil
	}
	if err := heal(p); err != nil {
		return fmt.Errorf("netem: heal %s: %w", addr, err)
	}
	return nil
}

// heal removes p's stall toxics. The caller holds Net.mu.
func heal(p *proxy) error {
	var errs []error
	for _, dir := range []string{"upstream", "downstream"} {
		errs = append(errs, p.p.Toxics.RemoveToxic(context.Background(), stallToxicType+"_"+dir))
	}
	p.partitioned = false
	return errors.Join(errs...)
}

// ProxyStats describes one proxy of a Net.
type ProxyStats struct {
	// Upstream is the address the proxy forwards to; Listen is where it listens.
	Upstream, Listen string
	// Dials is the connections made through Dial to Upstream.
	Dials int64
	// Partitioned says whether Upstream is partitioned now.
	Partitioned bool
}

// Stats describes every proxy started so far, sorted by upstream address.
func (n *Net) Stats() []ProxyStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]ProxyStats, 0, len(n.proxies))
	for addr, p := range n.proxies {
		out = append(out, ProxyStats{Upstream: addr, Listen: p.p.Listen, Dials: p.dials.Load(), Partitioned: p.partitioned})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Upstream < out[j].Upstream })
	return out
}

// Close heals every partition, stops every proxy and closes the connections through them.
// Later calls do nothing.
func (n *Net) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	var errs []error
	for _, p := range n.proxies {
		// A stalled link would keep its goroutines waiting after Stop closes its sockets.
		if p.partitioned {
			errs = append(errs, heal(p))
		}
		p.p.Stop()
	}
	return errors.Join(errs...)
}
