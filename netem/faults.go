package netem

import (
	"fmt"
	"time"
)

// The faults below act on one upstream address: on the connections open through its proxy and
// on those made later, until Heal (Sever acts once). Each starts addr's proxy if no connection
// has been made to addr yet, except Sever and Heal, which have nothing to do then. They are
// safe for concurrent use, and return ErrClosed after Close.
//
// Partition and the reply faults combine: a partition holds both directions whatever the
// replies were doing, and Heal ends all of them. DropReplies and StallReplies replace each
// other.

// severWait bounds how long Sever waits for the connections it cut to let go: each goes at
// once unless the proxy is wedged, which Sever then reports rather than hanging.
const severWait = 5 * time.Second

// Partition silences addr in both directions, for connections open now and made later: bytes
// sent either way wait, as behind a network that drops every packet while TCP retransmits,
// until Heal. Clients see replies stop coming, not closed connections; their read timeouts
// decide what happens. Bytes sent after Partition returns do not get through; bytes the proxy
// had already taken in may. Partitioning a partitioned addr does nothing.
func (n *Net) Partition(addr string) error {
	return n.fault(addr, func(p *proxy) { p.partitioned = true })
}

// DropReplies loses addr's replies: commands still reach the server and run, but every byte
// the server sends back, on connections open now and made later, is read and discarded, until
// Heal. It is the "did my command run?" case: the client times out on a command that ran.
//
// A connection that lost bytes is out of step for good: its next reply would be matched to a
// command whose reply was lost, or be torn. No real network does that to a live TCP
// connection, so Heal closes every such connection before replies flow again (when the first
// byte would pass) and clients see EOF and reconnect; connections that lost nothing, such as
// one made during the drop that sent nothing, go on. To start over from connections made after
// the fault, call Sever after Heal.
func (n *Net) DropReplies(addr string) error {
	return n.fault(addr, func(p *proxy) { p.replies = drop })
}

// StallReplies delays addr's replies: commands reach the server and run, but the bytes it sends
// back wait, on connections open now and made later, and arrive when Heal is called. Unlike
// DropReplies it loses nothing, so the connections stay usable: a client that timed out meanwhile
// is the one that must not trust them.
func (n *Net) StallReplies(addr string) error {
	return n.fault(addr, func(p *proxy) { p.replies = hold })
}

// Heal ends every fault on addr: what a partition or StallReplies held is delivered, on the
// connections still open, and replies flow again, except on connections that lost replies to
// DropReplies, which close instead. Healing an addr without faults does nothing.
func (n *Net) Heal(addr string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrClosed
	}
	if p := n.proxies[addr]; p != nil {
		p.heal()
	}
	return nil
}

// Sever closes every connection open through addr's proxy, as a server restart or a firewall
// that forgot its connections would: clients read EOF (or a reset) and write into a closed
// socket, and must reconnect. Bytes held by a fault on those connections are lost. Connections
// made afterwards are not touched and work, under the faults still in force. When Sever
// returns, nothing more passes on the connections it closed. A connection the proxy has not
// accepted yet when Sever is called (its Dial returned a moment before) can escape it; after
// Heal that connection saw no fault, so Heal then Sever leaves no connection that did.
// Severing an addr no connection was made to does nothing.
func (n *Net) Sever(addr string) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return ErrClosed
	}
	p := n.proxies[addr]
	n.mu.Unlock()
	if p == nil {
		return nil
	}
	if err := p.ctl.sever(severWait); err != nil {
		return fmt.Errorf("netem: sever %s: %w", addr, err)
	}
	return nil
}

// Pause partitions addr now and heals it after d, in the background, as a server that stops
// answering for a while (a long fork, a GC pause of its host) and then catches up: what waited
// is delivered. The heal is skipped if addr is healed before d, so that a later Partition is
// not ended by an earlier Pause; Close cancels it. d must be positive.
func (n *Net) Pause(addr string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("netem: pause %s for %v: not a positive duration", addr, d)
	}
	var heals uint64
	err := n.fault(addr, func(p *proxy) {
		p.partitioned = true
		heals = p.heals
		n.bg.Add(1)
		go func() {
			defer n.bg.Done()
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-n.done:
				return
			}
			n.mu.Lock()
			defer n.mu.Unlock()
			if !n.closed && p.heals == heals {
				p.heal()
			}
		}()
	})
	return err
}

// fault starts addr's proxy if need be and changes its faults with change.
func (n *Net) fault(addr string, change func(*proxy)) error {
	p, err := n.proxy(addr)
	if err != nil {
		return err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrClosed
	}
	change(p)
	p.apply()
	return nil
}

// heal ends p's faults. The caller holds Net.mu.
func (p *proxy) heal() {
	p.partitioned, p.replies = false, pass
	p.heals++
	p.apply()
}

// apply sets the flows of p's faultToxics from its faults. The caller holds Net.mu.
func (p *proxy) apply() {
	up, down := pass, p.replies
	if p.partitioned {
		up, down = hold, hold
	}
	p.ctl.set(up, down)
}
