package docker

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// commandTimeout bounds one readiness probe; a node that does not answer in time is not ready.
const commandTimeout = 2 * time.Second

// probe is how Start's own readiness probes and set-up commands reach the nodes: plaintext by
// default; over TLS and logged in as an ACL user for a topology started with Options.TLS and
// Options.Auth. It is a plain value, safe for concurrent use.
type probe struct {
	tls            *tls.Config // nil: plaintext
	user, password string      // user "": no AUTH
}

// command sends one command to addr on a fresh plaintext connection (see probe.command).
func command(ctx context.Context, addr string, args ...string) (string, error) {
	return probe{}.command(ctx, addr, args...)
}

// command sends one command to addr on a fresh connection and returns its reply if it is a
// status, integer or bulk string: enough for the INFO and CLUSTER INFO probes that decide
// readiness, without a client library's reconnects and topology discovery in the way. With a
// user, AUTH goes first on the same connection.
func (p probe) command(ctx context.Context, addr string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	var d net.Dialer
	var conn net.Conn
	var err error
	if p.tls != nil {
		conn, err = (&tls.Dialer{NetDialer: &d, Config: p.tls}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return "", err
	}
	defer conn.Close()
	dl, _ := ctx.Deadline()
	conn.SetDeadline(dl)
	r := bufio.NewReader(conn)
	if p.user != "" {
		// The reply to a failed AUTH names no password; neither does this error.
		if _, err := roundTrip(conn, r, addr, "AUTH", p.user, p.password); err != nil {
			return "", fmt.Errorf("%s: AUTH as %s: %w", addr, p.user, err)
		}
	}
	return roundTrip(conn, r, addr, args...)
}

// roundTrip writes one command to conn and reads its reply from r.
func roundTrip(conn net.Conn, r *bufio.Reader, addr string, args ...string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return "", err
	}
	head, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	head = strings.TrimRight(head, "\r\n")
	if head == "" {
		return "", errors.New("empty reply")
	}
	switch head[0] {
	case '+', ':':
		return head[1:], nil
	case '-':
		return "", fmt.Errorf("%s: %s", addr, head[1:]) // an error reply never echoes the command
	case '$':
		n, err := strconv.Atoi(head[1:])
		if err != nil || n < 0 || n > 1<<20 {
			return "", fmt.Errorf("%s: bad bulk length %q", addr, head)
		}
		body := make([]byte, n+2)
		if _, err := io.ReadFull(r, body); err != nil {
			return "", err
		}
		return string(body[:n]), nil
	}
	return "", fmt.Errorf("%s: unexpected reply %q", addr, head)
}

// infoField returns the value of field in an INFO-style "field:value" text, or "".
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// poll calls ready every pollInterval until it returns nil or ctx ends; the error then says what
// was still missing.
func poll(ctx context.Context, what string, ready func(context.Context) error) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %v)", what, context.Cause(ctx), err)
		case <-t.C:
		}
	}
}

// allReport checks that every node at addrs answers cmd with field set to want, and says which
// one did not.
func (p probe) allReport(ctx context.Context, addrs []string, field, want string, cmd ...string) error {
	for _, a := range addrs {
		info, err := p.command(ctx, a, cmd...)
		if err != nil {
			return err
		}
		if got := infoField(info, field); got != want {
			return fmt.Errorf("%s: %s %q, want %q", a, field, got, want)
		}
	}
	return nil
}

// replicasInSync checks that every replica's link to its master is up, i.e. its initial sync is
// done: until then a replica holds none of the master's data, so a fail-over to it loses every
// lock and the per-node figures show it idle.
func (p probe) replicasInSync(ctx context.Context, replicas []string) error {
	return p.allReport(ctx, replicas, "master_link_status", "up", "INFO", "replication")
}
