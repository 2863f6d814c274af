package lockcore

import (
	"errors"
	"slices"
	"strings"
)

// ErrNodeTimeout is the cause in a NodeError for a RedLock master that did not answer within
// the RedLock's NodeTimeout.
var ErrNodeTimeout = errors.New("lockcore: no answer within the node timeout")

// NodeError is the failure of one Redis deployment among several: a RedLock master, or the
// Client of one part of a MultiLock. A RedLock or MultiLock error joins one NodeError per
// deployment that failed, so errors.As finds the node and errors.Is still finds the cause
// (ErrNotOwner, ErrNodeTimeout, a context's error, a Redis error).
type NodeError struct {
	// Node is the deployment's address: the Client's InitAddress (or the addresses of the
	// rueidis client it was given), joined by "," when several. It never carries credentials.
	Node string
	// Err is what the node's call returned.
	Err error
}

// Error returns "node <addr>: <cause>".
func (e *NodeError) Error() string { return "node " + e.Node + ": " + e.Err.Error() }

// Unwrap returns the cause, for errors.Is and errors.As.
func (e *NodeError) Unwrap() error { return e.Err }

// onNode wraps a non-nil err in a NodeError naming node, unless it already names one: a
// RedLock inside a MultiLock has named its masters, which a wrapper could only blur.
func onNode(node string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*NodeError](err); ok {
		return err
	}
	return &NodeError{Node: node, Err: err}
}

// nodeName names the deployment a Client talks to, for NodeError: the addresses it was told to
// connect to, or, for a rueidis client passed in, the nodes that client knows. Credentials are
// stripped: a user may have written an address as a URL with a password, and errors reach logs.
func (c *Client) nodeName() string {
	addrs := slices.Clone(c.opt.Redis.InitAddress)
	if c.opt.Client != nil || len(addrs) == 0 {
		addrs = addrs[:0]
		for a := range c.rdb.Nodes() {
			addrs = append(addrs, a)
		}
		slices.Sort(addrs)
	}
	for i, a := range addrs {
		addrs[i] = hostPort(a)
	}
	return strings.Join(addrs, ",")
}

// hostPort returns addr without a URL scheme, user information or path.
func hostPort(addr string) string {
	if i := strings.Index(addr, "://"); i >= 0 {
		addr = addr[i+3:]
	}
	if i := strings.LastIndex(addr, "@"); i >= 0 {
		addr = addr[i+1:]
	}
	if i := strings.IndexAny(addr, "/?"); i >= 0 {
		addr = addr[:i]
	}
	return addr
}

// node returns the name of the deployment the lock lives on.
func (m *Mutex) node() string     { return m.c.node }
func (m *FairMutex) node() string { return m.c.node }
func (l *ReadLock) node() string  { return l.rw.c.node }
func (l *WriteLock) node() string { return l.rw.c.node }

// noded is a Locker that knows its deployment's name; lock kinds of other packages are not, and
// their errors go out as they came.
type noded interface{ node() string }

// lockerNode returns l's deployment name, and whether it has one.
func lockerNode(l Locker) (string, bool) {
	if n, ok := l.(noded); ok {
		return n.node(), true
	}
	return "", false
}
