package compose

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
)

// maxPortAttempts bounds retries after losing the race for a free port to another process.
const maxPortAttempts = 5

// Single is one private standalone redis-server process started by StartSingle. Its methods are
// safe for concurrent use.
type Single struct {
	addr string

	mu     sync.Mutex // guards proc, which Restart replaces, and closed
	proc   *nativeProcess
	closed bool
}

var _ Topology = (*Single)(nil)

// StartSingle starts one private redis-server on a free port of opt.Host, with no persistence
// (--save "" --appendonly no) and protected mode off, in its own temp dir where it also logs,
// and waits until it answers PING. ctx bounds only the start: the server runs until Close. On
// failure nothing is left running and the error includes the last lines of the server log; it
// wraps ErrRedisServerNotFound when there is no binary, ErrServerExited when the server died
// during startup, and ctx's cause or context.DeadlineExceeded when time ran out. StartSingle is
// safe for concurrent use; each call starts its own server.
func StartSingle(ctx context.Context, opt NativeOptions) (*Single, error) {
	return startSingle(ctx, opt, freePort)
}

// startSingle is StartSingle with the port picker passed in, so tests can make it lose the port
// race on purpose.
func startSingle(ctx context.Context, opt NativeOptions, pickPort func(host string) (int, error)) (*Single, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	bin, err := findBinary(opt.Binary)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, opt.StartTimeout,
		&startTimeoutError{timeout: opt.StartTimeout})
	defer cancel()
	for attempt := 1; ; attempt++ {
		port, err := pickPort(opt.Host)
		if err != nil {
			return nil, err
		}
		s, err := startSingleOn(ctx, bin, opt, port)
		if err == nil {
			return s, nil
		}
		var se *startError
		if attempt == maxPortAttempts || !errors.As(err, &se) || !lostPortRace(se) || ctx.Err() != nil {
			return nil, err
		}
	}
}

// lostPortRace reports whether a start failed only because someone took the port between
// freePort and the server's bind.
func lostPortRace(se *startError) bool {
	return errors.Is(se.cause, ErrServerExited) && strings.Contains(se.logTail, "Address already in use")
}

// announceArgs make a server bound on host other than loopback announce host to its master,
// sentinels and cluster peers: they would otherwise record the source address of its
// connections, which the kernel picks from the host's default route (Redis 7.0's
// bind-source-addr does not cover replication), and which clients on host's network may not
// reach.
func announceArgs(host string) []string {
	if host == DefaultHost {
		return nil
	}
	return []string{"--replica-announce-ip", host, "--cluster-announce-ip", host}
}

// startSingleOn makes one attempt on one port; on failure the process is stopped and its dir
// removed before the error is returned.
func startSingleOn(ctx context.Context, bin string, opt NativeOptions, port int) (*Single, error) {
	addr := net.JoinHostPort(opt.Host, strconv.Itoa(port))
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", opt.Host,
		"--save", "",
		"--appendonly", "no",
		"--protected-mode", "no",
		"--daemonize", "no",
	}
	args = append(args, announceArgs(opt.Host)...)
	var readyTLS *tls.Config
	if opt.TLS != nil {
		var err error
		if readyTLS, err = opt.TLS.readyConfig(); err != nil {
			return nil, err
		}
		args = append(args, opt.TLS.args(port)...)
	}
	args = append(args, opt.ExtraArgs...)
	var files map[string]string
	if opt.Auth != nil {
		// The config file must come first: redis-server reads only its first argument as one.
		args = append([]string{secureConfName}, args...)
		files = map[string]string{secureConfName: opt.Auth.conf()}
	}
	p, err := startProcessWithFiles(bin, args, files, opt.CPUs)
	if err != nil {
		return nil, err
	}
	p.tls = readyTLS
	if err := waitReady(ctx, p, addr); err != nil {
		_ = p.stop(stopGrace)
		return nil, &startError{addr: addr, pid: p.pid(), cause: err, logTail: lastLines(p.log(), logTailLines)}
	}
	return &Single{proc: p, addr: addr}, nil
}

// Addr returns the server's "host:port". It is safe for concurrent use.
func (s *Single) Addr() string { return s.addr }

// Addrs returns the server's address as a one-element slice the caller owns. It is safe for
// concurrent use.
func (s *Single) Addrs() []string { return []string{s.addr} }

// Kind returns KindSingle. It is safe for concurrent use.
func (s *Single) Kind() string { return KindSingle }

// Describe returns the one master node. It is safe for concurrent use.
func (s *Single) Describe() Description {
	return Description{Kind: KindSingle, Nodes: []Node{{Addr: s.addr, Role: RoleMaster}}}
}

// Pid returns the server's process id, for fault injection (SIGSTOP, SIGKILL) and checks. It is
// safe for concurrent use.
func (s *Single) Pid() int { return s.process().pid() }

// Log returns the end (up to 256 KiB) of the server log so far; after Close, as it was when the
// server stopped. It is meant for failure reports and is safe for concurrent use.
func (s *Single) Log() string { return s.process().log() }

// Close stops the server (SIGTERM, then SIGKILL after 5 s), waits for the process to exit, and
// removes its temp dir. A server that already died (a fault test killed it) is not an error.
// Close is idempotent and safe for concurrent use: every call waits for the first to finish and
// returns its result.
func (s *Single) Close() error {
	s.mu.Lock()
	s.closed = true // a Restart after this starts nothing
	p := s.proc
	s.mu.Unlock()
	return p.stop(stopGrace)
}

// process returns the current process: the one started, or the last Restart's.
func (s *Single) process() *nativeProcess {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}
