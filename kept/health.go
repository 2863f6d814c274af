package kept

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// Phase is where an up is in its life, as Check finds it.
type Phase int

// Check's phases.
const (
	// Ready: the up runs and its topology answered when it started.
	Ready Phase = iota
	// Starting: the up runs but its topology is not up yet (no Description).
	Starting
	// Dead: the up process is gone; its state file is stale.
	Dead
)

// Health is the state of one kept topology: whether its up runs and whether each node answers.
type Health struct {
	State State
	Phase Phase
	// Nodes holds, for each node of State.Description (Ready only), nil when it answered PING
	// or why it did not.
	Nodes []error
}

// OK reports whether the up is ready and every node answered.
func (h Health) OK() bool {
	if h.Phase != Ready {
		return false
	}
	for _, err := range h.Nodes {
		if err != nil {
			return false
		}
	}
	return true
}

// Check finds whether st's up process runs and, if its topology is ready, PINGs every node at
// once, each within timeout.
func Check(st State, timeout time.Duration) Health {
	h := Health{State: st}
	switch {
	case !UpAlive(st.Pid):
		h.Phase = Dead
		return h
	case st.Description == nil:
		h.Phase = Starting
		return h
	}
	nodes := st.Description.Nodes
	h.Nodes = make([]error, len(nodes))
	useTLS := st.Secure != nil && st.Secure.TLS
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { h.Nodes[i] = Ping(n.Addr, timeout, useTLS) })
	}
	wg.Wait()
	return h
}

// Ping sends an inline PING to addr on a fresh connection (TLS with useTLS), all within
// timeout; anything but +PONG, or -NOAUTH from a node started with an ACL user, (a refused
// connection, -LOADING, silence) is an error.
func Ping(addr string, timeout time.Duration, useTLS bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var d net.Dialer
	var conn net.Conn
	var err error
	if useTLS {
		// Whether the node answers, not who it is: the run line's CA checks that.
		conn, err = (&tls.Dialer{NetDialer: &d, Config: &tls.Config{InsecureSkipVerify: true}}).DialContext(ctx, "tcp", addr) //nolint:gosec // liveness only
	} else {
		conn, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	dl, _ := ctx.Deadline()
	conn.SetDeadline(dl)
	if _, err := io.WriteString(conn, "PING\r\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return fmt.Errorf("no answer to PING: %w", err)
	}
	if line = strings.TrimSpace(line); line != "+PONG" && !strings.HasPrefix(line, "-NOAUTH") {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}
