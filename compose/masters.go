package compose

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
)

// ErrUnknownNode is returned, wrapped with the address, by Kill for an address at which the
// topology started no process. It is a value, safe to share between goroutines.
var ErrUnknownNode = errors.New("compose: no process of this topology at that address")

// Masters is N independent standalone redis-server processes started by StartMasters: the
// deployment RedLock runs on. Its methods are safe for concurrent use.
type Masters struct {
	nodes nodeList
}

var _ Topology = (*Masters)(nil)

// StartMasters starts n (1 ≤ n ≤ MaxMasters) independent private redis-servers, each as
// StartSingle would, concurrently. ctx bounds only the start, and opt.StartTimeout bounds each
// server's. On failure the servers already started are stopped and the first failure is
// returned (see StartSingle for what it wraps). StartMasters is safe for concurrent use.
func StartMasters(ctx context.Context, opt NativeOptions, n int) (*Masters, error) {
	if n < 1 || n > MaxMasters {
		return nil, fmt.Errorf("%w: masters:%d: want 1 to %d masters", ErrBadSpec, n, MaxMasters)
	}
	// The first failure cancels the other starts rather than waiting for them.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	nodes := make(nodeList, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			nodes[i], errs[i] = StartSingle(ctx, opt)
			if errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	if err := firstFailure(errs); err != nil {
		nodes.stop()
		return nil, err
	}
	return &Masters{nodes: nodes}, nil
}

// firstFailure returns the first error that is not merely the cancellation another failure
// caused, or the first error if all are.
func firstFailure(errs []error) error {
	var first error
	for _, err := range errs {
		if err == nil {
			continue
		}
		if first == nil {
			first = err
		}
		if !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return first
}

// Kind returns KindMasters. It is safe for concurrent use.
func (m *Masters) Kind() string { return KindMasters }

// Addrs returns every master's address, in start order, in a slice the caller owns. It is safe
// for concurrent use.
func (m *Masters) Addrs() []string { return m.nodes.addrs() }

// Describe returns every server as a master. It is safe for concurrent use.
func (m *Masters) Describe() Description {
	d := Description{Kind: KindMasters}
	for _, a := range m.nodes.addrs() {
		d.Nodes = append(d.Nodes, Node{Addr: a, Role: RoleMaster})
	}
	return d
}

// Pid returns the process id of the server started at addr, or 0 if none was. It is safe for
// concurrent use.
func (m *Masters) Pid(addr string) int { return m.nodes.pid(addr) }

// Kill sends SIGKILL to the server started at addr and waits until it is gone, for fault
// injection; killing one already dead is not an error. It returns an error wrapping
// ErrUnknownNode if no server was started at addr. It is safe for concurrent use.
func (m *Masters) Kill(addr string) error { return m.nodes.kill(addr) }

// Close stops every server (as Single.Close does) and waits until all are gone. Servers killed
// before are not an error. Close is idempotent and safe for concurrent use.
func (m *Masters) Close() error { return m.nodes.stop() }

// nodeList is the processes a topology started. Its methods are safe for concurrent use once
// the list is built: the slice is never changed after.
type nodeList []*Single

// addrs returns the addresses of the started nodes (nil entries, from failed starts, skipped).
func (l nodeList) addrs() []string {
	out := make([]string, 0, len(l))
	for _, s := range l {
		if s != nil {
			out = append(out, s.addr)
		}
	}
	return out
}

func (l nodeList) find(addr string) *Single {
	for _, s := range l {
		if s != nil && s.addr == addr {
			return s
		}
	}
	return nil
}

func (l nodeList) pid(addr string) int {
	if s := l.find(addr); s != nil {
		return s.Pid()
	}
	return 0
}

// kill SIGKILLs the node at addr and waits until it has been reaped, so that the caller's next
// step (a failover check, say) sees it gone.
func (l nodeList) kill(addr string) error {
	s := l.find(addr)
	if s == nil {
		return fmt.Errorf("%w: %s", ErrUnknownNode, addr)
	}
	p := s.process()
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("compose: kill redis-server %s (pid %d): %w", addr, p.pid(), err)
	}
	<-p.done
	return nil
}

// stop stops every node concurrently and waits for all; nil entries are skipped.
func (l nodeList) stop() error {
	errs := make([]error, len(l))
	var wg sync.WaitGroup
	for i, s := range l {
		if s != nil {
			wg.Go(func() { errs[i] = s.Close() })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// startWithPortRetry calls start on free ports of host until one start does not fail because
// another process took the port first, at most maxPortAttempts times.
func startWithPortRetry(ctx context.Context, host string, start func(port int) (*Single, error)) (*Single, error) {
	for attempt := 1; ; attempt++ {
		port, err := freePort(host)
		if err != nil {
			return nil, err
		}
		s, err := start(port)
		if err == nil {
			return s, nil
		}
		var se *startError
		if attempt == maxPortAttempts || !errors.As(err, &se) || !lostPortRace(se) || ctx.Err() != nil {
			return nil, err
		}
	}
}

// startNode starts one data node of a sentinel or cluster topology: a single server with args
// (given its port) before opt.ExtraArgs, so the user's settings still win.
func startNode(ctx context.Context, bin string, opt NativeOptions, args func(port int) ([]string, error)) (*Single, error) {
	return startWithPortRetry(ctx, opt.Host, func(port int) (*Single, error) {
		o := opt
		o.ExtraArgs = nil
		if args != nil {
			a, err := args(port)
			if err != nil {
				return nil, err
			}
			o.ExtraArgs = a
		}
		o.ExtraArgs = append(append([]string{
			// A master waits this long for more replicas before a diskless full sync
			// (default 5 s in Redis 7); nothing else is coming, so do not wait.
			"--repl-diskless-sync-delay", "0",
		}, o.ExtraArgs...), opt.ExtraArgs...)
		return startSingleOn(ctx, bin, o, port)
	})
}

// hostPort splits a host:port that this package built or checked.
func hostPort(addr string) (host, port string) {
	host, port, _ = net.SplitHostPort(addr)
	return host, port
}

// topologyOptions fills opt's defaults for a start that waits for replication or gossip, where
// a zero StartTimeout means DefaultTopologyStartTimeout, and resolves the binary.
func topologyOptions(opt NativeOptions) (NativeOptions, string, error) {
	if opt.StartTimeout == 0 {
		opt.StartTimeout = DefaultTopologyStartTimeout
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return opt, "", err
	}
	bin, err := findBinary(opt.Binary)
	return opt, bin, err
}

// itoa is strconv.Itoa, short for building command lines.
func itoa(i int) string { return strconv.Itoa(i) }
