package compose

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/lockbench/lockbench/pin"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Settings of a started sentinel topology. The timings are far shorter than Redis's defaults
// (30 s and 3 min) so that a failover test takes seconds; a loaded machine may then see a
// spurious failover, which lockbench reports like any other.
const (
	// SentinelDownAfter is the sentinels' down-after-milliseconds: a master that has not
	// answered for this long is considered down.
	SentinelDownAfter = 1000 * time.Millisecond
	// SentinelFailoverTimeout is the sentinels' failover-timeout: it bounds one failover
	// attempt, and a failed attempt is retried after twice this.
	SentinelFailoverTimeout = 5000 * time.Millisecond
	// SentinelReplicas is how many replicas the master of a started topology has.
	SentinelReplicas = 2
	// SentinelCount is how many sentinels a started topology runs.
	SentinelCount = 3
	// SentinelQuorum is how many sentinels must agree that the master is down.
	SentinelQuorum = 2
)

// sentinelConfName is the sentinel's config file inside its dir; the sentinel rewrites it as it
// learns replicas, other sentinels and failovers.
const sentinelConfName = "sentinel.conf"

// Sentinel is a private sentinel deployment started by StartSentinel: one master, its replicas
// and the sentinels that monitor it, each a native process in its own temp dir. Clients dial the
// sentinels (Addrs) and ask for the master by name (MasterName). Its methods are safe for
// concurrent use.
type Sentinel struct {
	name      string
	data      nodeList // data[0] is the master at start, then the replicas
	sentinels nodeList
	admin     *adminConns
}

var _ Topology = (*Sentinel)(nil)

// StartSentinel starts a master with SentinelReplicas replicas (replicaof) and SentinelCount
// sentinels monitoring it under masterName (DefaultMasterName if empty), all on free ports of
// opt.Host with no persistence, and waits until the master sees its replicas online and every
// sentinel sees the master, its replicas and the other sentinels. opt.StartTimeout bounds the
// whole start (zero means DefaultTopologyStartTimeout); opt.ExtraArgs go to the data nodes,
// not to the sentinels. Sentinels run as redis-sentinel when it is installed (beside
// opt.Binary, or in PATH for the default binary), else as redis-server --sentinel. ctx bounds
// only the start. On failure nothing is left running and the error includes the end of the log
// of the server that failed or was not ready. StartSentinel is safe for concurrent use; each
// call starts its own servers.
func StartSentinel(ctx context.Context, opt NativeOptions, masterName string) (*Sentinel, error) {
	if masterName == "" {
		masterName = DefaultMasterName
	}
	if err := checkMasterName(masterName); err != nil {
		return nil, err
	}
	opt, bin, err := topologyOptions(opt)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, opt.StartTimeout, &startTimeoutError{timeout: opt.StartTimeout})
	defer cancel()
	s := &Sentinel{name: masterName, admin: newAdminConns()}
	if s.admin.apply, err = opt.applyAdmin(); err != nil {
		return nil, err
	}
	if err := s.start(ctx, bin, opt); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// start starts the processes in order, filling s as it goes so that Close can stop whatever
// started. Replicas are in sync before the sentinels start, so each sentinel learns of them from
// its first INFO to the master instead of up to 10 s later.
func (s *Sentinel) start(ctx context.Context, bin string, opt NativeOptions) error {
	master, err := startNode(ctx, bin, opt, nil)
	if err != nil {
		return err
	}
	s.data = nodeList{master}
	mhost, mport := hostPort(master.addr)

	replicas, err := startAll(SentinelReplicas, func() (*Single, error) {
		return startNode(ctx, bin, opt, func(int) ([]string, error) {
			return []string{"--replicaof", mhost, mport}, nil
		})
	})
	s.data = append(s.data, replicas...)
	if err != nil {
		return err
	}
	if err := poll(ctx, s.replicationReady); err != nil {
		return s.data.notReady(err)
	}

	sbin, sargs := sentinelCommand(bin)
	conf := sentinelConf(s.name, mhost, mport)
	if opt.Host != DefaultHost {
		// As announceArgs, for the sentinels' hellos to each other.
		conf += "sentinel announce-ip " + opt.Host + "\n"
	}
	if opt.Auth != nil {
		conf += opt.Auth.sentinelConf(s.name)
	}
	sentinels, err := startAll(SentinelCount, func() (*Single, error) {
		return startSentinelProcess(ctx, sbin, sargs, opt.Host, conf, opt.TLS, opt.CPUs)
	})
	s.sentinels = sentinels
	if err != nil {
		return err
	}
	if err := poll(ctx, s.sentinelsReady); err != nil {
		return slices.Concat(s.sentinels, s.data).notReady(err)
	}
	return nil
}

// startAll runs n starts concurrently. It returns the nodes that started (nil where one failed)
// and the first failure.
func startAll(n int, start func() (*Single, error)) (nodeList, error) {
	nodes := make(nodeList, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() { nodes[i], errs[i] = start() })
	}
	wg.Wait()
	return nodes, firstFailure(errs)
}

// notReady turns a readiness wait that failed into a start error carrying the log of the node
// the wait was stuck on.
func (l nodeList) notReady(err error) error {
	var nr *notReadyError
	if errors.As(err, &nr) {
		if n := l.find(nr.addr); n != nil {
			return &startError{addr: n.addr, pid: n.Pid(), cause: err, logTail: lastLines(n.Log(), logTailLines)}
		}
	}
	return fmt.Errorf("compose: %w", err)
}

// replicationReady checks that the master has all replicas online and each replica's link to
// it is up.
func (s *Sentinel) replicationReady(ctx context.Context) error {
	master := s.data[0].addr
	inf, err := s.admin.info(ctx, master, "replication")
	if err != nil {
		return notReady(master, "%v", err)
	}
	if online := onlineReplicas(inf); online != SentinelReplicas {
		return notReady(master, "%d of %d replicas online", online, SentinelReplicas)
	}
	for _, r := range s.data[1:] {
		inf, err := s.admin.info(ctx, r.addr, "replication")
		if err != nil {
			return notReady(r.addr, "%v", err)
		}
		if st := inf["master_link_status"]; st != "up" {
			return notReady(r.addr, "replica link to master %s is %q, want up", master, st)
		}
	}
	return nil
}

// onlineReplicas counts the slaveN lines of INFO replication in state online.
func onlineReplicas(inf map[string]string) int {
	n := 0
	for i := 0; ; i++ {
		v, ok := inf["slave"+itoa(i)]
		if !ok {
			return n
		}
		if parseFields(v)["state"] == "online" {
			n++
		}
	}
}

// sentinelsReady checks that every sentinel sees the master up, all its replicas connected and
// all other sentinels: only then can they agree on and carry out a failover.
func (s *Sentinel) sentinelsReady(ctx context.Context) error {
	for _, sn := range s.sentinels {
		m, err := s.admin.do(ctx, sn.addr, "SENTINEL", "MASTER", s.name)
		if err != nil {
			return notReady(sn.addr, "%v", err)
		}
		f, err := m.AsStrMap()
		if err != nil {
			return notReady(sn.addr, "SENTINEL MASTER %s: %v", s.name, err)
		}
		if f["flags"] != "master" || f["num-slaves"] != itoa(SentinelReplicas) || f["num-other-sentinels"] != itoa(SentinelCount-1) {
			return notReady(sn.addr, "sentinel sees master flags=%s num-slaves=%s num-other-sentinels=%s, want master, %d, %d",
				f["flags"], f["num-slaves"], f["num-other-sentinels"], SentinelReplicas, SentinelCount-1)
		}
		reps, err := sentinelTable(ctx, s.admin, sn.addr, "REPLICAS", s.name)
		if err != nil {
			return notReady(sn.addr, "%v", err)
		}
		for _, r := range reps {
			if r["flags"] != "slave" {
				return notReady(sn.addr, "sentinel sees replica %s with flags %s, want slave", net.JoinHostPort(r["ip"], r["port"]), r["flags"])
			}
		}
	}
	return nil
}

// sentinelTable runs SENTINEL sub name (REPLICAS, SENTINELS, MASTERS) and returns one field map
// per entry.
func sentinelTable(ctx context.Context, a *adminConns, addr string, sub ...string) ([]map[string]string, error) {
	args := append([]string{"SENTINEL"}, sub...)
	m, err := a.do(ctx, addr, args...)
	if err != nil {
		return nil, err
	}
	rows, err := m.ToArray()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", addr, strings.Join(args, " "), err)
	}
	out := make([]map[string]string, 0, len(rows))
	for _, r := range rows {
		f, err := r.AsStrMap()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", addr, strings.Join(args, " "), err)
		}
		out = append(out, f)
	}
	return out, nil
}

// sentinelCommand returns the program that runs a sentinel and the arguments that follow the
// config file: redis-sentinel if installed with serverBin (beside it, or in PATH when serverBin
// came from PATH), else serverBin in sentinel mode. Debian's redis-server package ships no
// redis-sentinel; both are the same program anyway.
func sentinelCommand(serverBin string) (string, []string) {
	if p := filepath.Join(filepath.Dir(serverBin), "redis-sentinel"); isProgram(p) {
		return p, nil
	}
	if p, err := exec.LookPath("redis-sentinel"); err == nil {
		if abs, err := filepath.Abs(p); err == nil && isProgram(abs) {
			return abs, nil
		}
	}
	return serverBin, []string{"--sentinel"}
}

// isProgram reports whether path names an executable file.
func isProgram(path string) bool {
	_, err := exec.LookPath(path)
	return err == nil
}

// sentinelConf is the config file of every sentinel of a started topology.
func sentinelConf(name, host, port string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "sentinel monitor %s %s %s %d\n", name, host, port, SentinelQuorum)
	fmt.Fprintf(&b, "sentinel down-after-milliseconds %s %d\n", name, SentinelDownAfter.Milliseconds())
	fmt.Fprintf(&b, "sentinel failover-timeout %s %d\n", name, SentinelFailoverTimeout.Milliseconds())
	fmt.Fprintf(&b, "sentinel parallel-syncs %s 1\n", name)
	return b.String()
}

// startSentinelProcess starts one sentinel with its own copy of conf, retrying on a new port if
// another process takes the one picked.
func startSentinelProcess(ctx context.Context, bin string, modeArgs []string, host, conf string, tlsOpt *NativeTLS, cpus pin.CPUs) (*Single, error) {
	return startWithPortRetry(ctx, host, func(port int) (*Single, error) {
		addr := net.JoinHostPort(host, itoa(port))
		// The config file must come first: redis-server reads only its first argument as one.
		args := append(append([]string{sentinelConfName}, modeArgs...),
			"--port", itoa(port),
			"--bind", host,
			"--protected-mode", "no",
			"--daemonize", "no",
		)
		var readyTLS *tls.Config
		if tlsOpt != nil {
			var err error
			if readyTLS, err = tlsOpt.readyConfig(); err != nil {
				return nil, err
			}
			args = append(args, tlsOpt.args(port)...) // tls-replication: to the data nodes and the other sentinels
		}
		p, err := startProcessWithFiles(bin, args, map[string]string{sentinelConfName: conf}, cpus)
		if err != nil {
			return nil, err
		}
		p.tls = readyTLS
		if err := waitReady(ctx, p, addr); err != nil {
			_ = p.stop(stopGrace)
			return nil, &startError{addr: addr, pid: p.pid(), cause: err, logTail: lastLines(p.log(), logTailLines)}
		}
		return &Single{proc: p, addr: addr}, nil
	})
}

// Kind returns KindSentinel. It is safe for concurrent use.
func (s *Sentinel) Kind() string { return KindSentinel }

// Addrs returns the sentinels' addresses, which clients dial to find the master, in a slice
// the caller owns. It is safe for concurrent use.
func (s *Sentinel) Addrs() []string { return s.sentinels.addrs() }

// MasterName returns the name the sentinels know the master by. It is safe for concurrent use.
func (s *Sentinel) MasterName() string { return s.name }

// MasterAddr returns the address of the current master as the sentinels report it (the answer
// most of them give), which changes after a failover. It fails if no sentinel answers within
// ctx. It is safe for concurrent use.
func (s *Sentinel) MasterAddr(ctx context.Context) (string, error) {
	return sentinelMasterAddr(ctx, s.admin, s.sentinels.addrs(), s.name)
}

// Describe returns the current master (as the sentinels report it), the other data nodes as
// replicas, and the sentinels. If no sentinel answers within a second it reports the roles at
// start. It is safe for concurrent use.
func (s *Sentinel) Describe() Description {
	master := s.data[0].addr
	ctx, cancel := context.WithTimeout(context.Background(), describeTimeout)
	defer cancel()
	if m, err := s.MasterAddr(ctx); err == nil && s.data.find(m) != nil {
		master = m
	}
	d := Description{Kind: KindSentinel, MasterName: s.name, Nodes: []Node{{Addr: master, Role: RoleMaster}}}
	for _, a := range s.data.addrs() {
		if a != master {
			d.Nodes = append(d.Nodes, Node{Addr: a, Role: RoleReplica})
		}
	}
	for _, a := range s.sentinels.addrs() {
		d.Nodes = append(d.Nodes, Node{Addr: a, Role: RoleSentinel})
	}
	return d
}

// Pid returns the process id of the server or sentinel started at addr, or 0 if none was. It is
// safe for concurrent use.
func (s *Sentinel) Pid(addr string) int {
	if pid := s.data.pid(addr); pid != 0 {
		return pid
	}
	return s.sentinels.pid(addr)
}

// Kill sends SIGKILL to the server or sentinel started at addr and waits until it is gone, for
// fault injection (kill the master to force a failover); killing one already dead is not an
// error. It returns an error wrapping ErrUnknownNode if nothing was started at addr. It is safe
// for concurrent use.
func (s *Sentinel) Kill(addr string) error {
	if s.data.find(addr) != nil {
		return s.data.kill(addr)
	}
	return s.sentinels.kill(addr)
}

// Close stops the sentinels, then the data nodes (so no failover starts during shutdown), waits
// until all are gone and removes their temp dirs. Processes killed before are not an error.
// Close is idempotent and safe for concurrent use.
func (s *Sentinel) Close() error {
	s.admin.close()
	return errors.Join(s.sentinels.stop(), s.data.stop())
}

// sentinelMasterAddr asks every sentinel for name's master and returns the address that most
// of them give: as soon as a majority of sentinels agree, or else, once all have answered or
// failed, the most common answer (ties go to the earliest in sentinels). During a failover they
// briefly disagree, and a paused sentinel must not hold up the answer of the others.
func sentinelMasterAddr(ctx context.Context, a *adminConns, sentinels []string, name string) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the queries still waiting once the answer is known
	type reply struct {
		i    int
		addr string
		err  error
	}
	replies := make(chan reply, len(sentinels)) // buffered: late queries never block
	for i, sn := range sentinels {
		go func() {
			addr, err := askMasterAddr(ctx, a, sn, name)
			replies <- reply{i, addr, err}
		}()
	}
	answers := make([]string, len(sentinels))
	errs := make([]error, len(sentinels))
	votes := func(addr string) int {
		n := 0
		for _, ans := range answers {
			if ans == addr {
				n++
			}
		}
		return n
	}
	for range sentinels {
		r := <-replies
		answers[r.i], errs[r.i] = r.addr, r.err
		if r.addr != "" && 2*votes(r.addr) > len(sentinels) {
			return r.addr, nil
		}
	}
	best, bestVotes := "", 0
	for _, ans := range answers {
		if v := votes(ans); ans != "" && v > bestVotes {
			best, bestVotes = ans, v
		}
	}
	if best == "" {
		return "", fmt.Errorf("compose: no sentinel reported master %q: %w", name, errors.Join(errs...))
	}
	return best, nil
}

// askMasterAddr asks one sentinel for name's master.
func askMasterAddr(ctx context.Context, a *adminConns, sentinel, name string) (string, error) {
	m, err := a.do(ctx, sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
	if err != nil {
		return "", err
	}
	if m.IsNil() {
		return "", fmt.Errorf("%s: %w %q", sentinel, errUnknownMaster, name)
	}
	hp, err := m.AsStrSlice()
	if err != nil || len(hp) != 2 {
		return "", fmt.Errorf("%s: SENTINEL GET-MASTER-ADDR-BY-NAME %s: unexpected reply %q (%v)", sentinel, name, hp, err)
	}
	return net.JoinHostPort(hp[0], hp[1]), nil
}

// errUnknownMaster is a sentinel's nil answer: it monitors no master by that name.
var errUnknownMaster = errors.New("sentinel monitors no master named")
