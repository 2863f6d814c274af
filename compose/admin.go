package compose

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

const (
	// adminTimeout bounds one admin command (and the dial before it) when the caller's ctx
	// allows longer: these commands are cheap, so a node that takes longer is not answering.
	adminTimeout = 2 * time.Second
	// pollInterval is how often a start re-checks replication, gossip or sentinel discovery.
	pollInterval = 50 * time.Millisecond
	// describeTimeout bounds the live queries behind Describe, which has no ctx: past it,
	// Describe falls back to what it knew before.
	describeTimeout = time.Second
)

// errAdminClosed is returned by admin commands issued after the topology was closed.
var errAdminClosed = errors.New("compose: topology is closed")

// adminConns runs admin commands (INFO, CLUSTER, SENTINEL) on nodes by address, over one cached
// rueidis connection per node. It is safe for concurrent use.
type adminConns struct {
	mu      sync.Mutex
	clients map[string]rueidis.Client
	closed  bool
	// apply, if set, adds credentials and TLS to every connection's options (see conn).
	apply func(*rueidis.ClientOption)
}

func newAdminConns() *adminConns {
	return &adminConns{clients: make(map[string]rueidis.Client)}
}

// client returns the connection to addr, dialling it if there is none yet. A failed dial is
// not cached, so a node that comes back later is reached.
func (a *adminConns) client(ctx context.Context, addr string) (rueidis.Client, error) {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil, errAdminClosed
	}
	if c, ok := a.clients[addr]; ok {
		a.mu.Unlock()
		return c, nil
	}
	a.mu.Unlock()

	// rueidis dials without a ctx; its dial timeout (which also bounds the handshake) stands
	// in for ctx's deadline.
	timeout := adminTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	if timeout <= 0 {
		return nil, context.DeadlineExceeded
	}
	opt := rueidis.ClientOption{
		InitAddress:       []string{addr},
		ForceSingleClient: true, // talk to this node only, whatever it is
		DisableCache:      true,
		AlwaysRESP2:       true, // INFO and CLUSTER NODES as plain bulk strings, replies as flat arrays
		DisableRetry:      true,
		ClientSetInfo:     rueidis.DisableClientSetInfo, // Redis < 7.2 and sentinels lack it
		Dialer:            net.Dialer{Timeout: timeout},
		ConnWriteTimeout:  adminTimeout,
	}
	if a.apply != nil {
		a.apply(&opt)
	}
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		c.Close()
		return nil, errAdminClosed
	}
	if old, ok := a.clients[addr]; ok { // a concurrent caller dialled first
		c.Close()
		return old, nil
	}
	a.clients[addr] = c
	return c, nil
}

// do runs one command on addr, bounded by ctx and adminTimeout. Errors name the node and the
// command; a Redis error reply is an error too, a nil reply is not.
func (a *adminConns) do(ctx context.Context, addr string, args ...string) (rueidis.RedisMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	c, err := a.client(ctx, addr)
	if err == nil {
		var m rueidis.RedisMessage
		m, err = c.Do(ctx, c.B().Arbitrary(args...).Build()).ToMessage()
		if err == nil || rueidis.IsRedisNil(err) { // a nil reply is an answer: check m.IsNil
			return m, nil
		}
	}
	return rueidis.RedisMessage{}, &adminError{addr: addr, cmd: strings.Join(args, " "), err: err}
}

// adminError is a failed admin command, naming the node and the command.
type adminError struct {
	addr, cmd string
	err       error
}

func (e *adminError) Error() string { return e.addr + ": " + e.cmd + ": " + e.err.Error() }
func (e *adminError) Unwrap() error { return e.err }

// isRedisError reports whether err is an error reply from a server (it answered), as opposed to
// a network or timeout failure.
func isRedisError(err error) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re)
}

// causeOf returns what went wrong in an admin command, without the node and command names
// adminError adds, for messages that name them already.
func causeOf(err error) error {
	var ae *adminError
	if errors.As(err, &ae) {
		return ae.err
	}
	return err
}

// str runs a command whose reply is a string (INFO, CLUSTER NODES, CLUSTER MYID).
func (a *adminConns) str(ctx context.Context, addr string, args ...string) (string, error) {
	m, err := a.do(ctx, addr, args...)
	if err != nil {
		return "", err
	}
	s, err := m.ToString()
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w", addr, strings.Join(args, " "), err)
	}
	return s, nil
}

// ok runs a command whose reply is +OK or any other non-error.
func (a *adminConns) ok(ctx context.Context, addr string, args ...string) error {
	_, err := a.do(ctx, addr, args...)
	return err
}

// info runs INFO section on addr and returns its fields.
func (a *adminConns) info(ctx context.Context, addr, section string) (map[string]string, error) {
	s, err := a.str(ctx, addr, "INFO", section)
	if err != nil {
		return nil, err
	}
	return parseInfo(s), nil
}

// close closes every connection; later commands fail with errAdminClosed. It is idempotent.
func (a *adminConns) close() {
	a.mu.Lock()
	clients := a.clients
	a.clients, a.closed = nil, true
	a.mu.Unlock()
	for _, c := range clients {
		c.Close()
	}
}

// parseInfo reads INFO's "field:value" lines, skipping section headers and blanks.
func parseInfo(s string) map[string]string {
	m := make(map[string]string)
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(l, "\r")
		if l == "" || l[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// parseFields reads INFO's comma-separated "k=v" values, as in
// "slave0:ip=127.0.0.1,port=6380,state=online,offset=1,lag=0".
func parseFields(s string) map[string]string {
	m := make(map[string]string)
	for _, f := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(f, "="); ok {
			m[k] = v
		}
	}
	return m
}

// notReadyError says which node a start is still waiting for, and why, so a start that runs
// out of time can show that node's log.
type notReadyError struct {
	addr string
	msg  string
}

func (e *notReadyError) Error() string { return e.addr + ": " + e.msg }

func notReady(addr, format string, args ...any) error {
	return &notReadyError{addr: addr, msg: fmt.Sprintf(format, args...)}
}

// poll calls check every pollInterval until it returns nil or ctx ends; then it returns the
// last check error wrapped in ctx's cause, so a timeout says what was still missing.
func poll(ctx context.Context, check func(context.Context) error) error {
	t := time.NewTimer(0)
	defer t.Stop()
	var last error
	for {
		select {
		case <-ctx.Done():
			if last == nil {
				return context.Cause(ctx)
			}
			return &waitError{last: last, cause: context.Cause(ctx)}
		case <-t.C:
		}
		err := check(ctx)
		if err == nil {
			return nil
		}
		// A check cut short by the deadline says less than the one before it.
		if last == nil || ctx.Err() == nil {
			last = err
		}
		t.Reset(pollInterval)
	}
}

// waitError is a wait that ended (timeout, cancel) before its condition held. It unwraps to
// both the cause and the last reason, so errors.As finds a notReadyError.
type waitError struct {
	last, cause error
}

func (e *waitError) Error() string   { return fmt.Sprintf("%v; still waiting for %v", e.cause, e.last) }
func (e *waitError) Unwrap() []error { return []error{e.cause, e.last} }
