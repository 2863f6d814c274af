package kept

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/pin"
	"github.com/lockbench/lockbench/target"
)

// UpOptions says what an Up runs, under which name. It is a plain value.
type UpOptions struct {
	// Dir is the state directory (DefaultDir); Name the topology's name (ValidName).
	Dir, Name string
	// Provider is target.ProviderNative or target.ProviderDocker; Image the Redis image of
	// the docker provider (default docker.DefaultImage).
	Provider, Image string
	// Topology is what to start. A sentinel topology's MasterName must be set.
	Topology compose.Spec
	// Auth starts every node with an ACL user and a random password, TLS starts them TLS
	// only; the password and certificates go to SecretsPath(Dir, Name).
	Auth, TLS bool
	// CPUs, if set, are the CPUs the server processes run on.
	CPUs pin.CPUs
}

// Up is a kept topology this process owns, the work of `lockbench up`: NewUp claims its name,
// Start starts the topology, Publish writes its state file for down and status, Stop stops it
// and Close removes what is left. Abandon may be called from another goroutine at any time;
// the other methods are not safe for concurrent use.
type Up struct {
	opt      UpOptions
	state    State
	sec      *target.Secure
	topo     compose.Topology
	stopOnce sync.Once
	stopErr  error
}

// NewUp claims o.Name in o.Dir for this process (see Claim; the error wraps ErrRunning when a
// live up owns the name). Close releases it.
func NewUp(o UpOptions) (*Up, error) {
	st := State{Name: o.Name, Pid: os.Getpid(), Provider: o.Provider, Topology: o.Topology.String(), Started: time.Now()}
	if _, err := Claim(o.Dir, st); err != nil {
		return nil, err
	}
	return &Up{opt: o, state: st}, nil
}

// Start makes the password and certificates (Auth, TLS) and starts the topology; ctx bounds
// the start. On error what it made is left for Close.
func (u *Up) Start(ctx context.Context) error {
	var native compose.NativeOptions
	if u.opt.Auth || u.opt.TLS {
		// Beside the state file, so that the run line can name them for as long as the
		// topology runs; Close removes them.
		sec, err := target.NewSecure(SecretsPath(u.opt.Dir, u.opt.Name), u.opt.Provider, u.opt.Auth, u.opt.TLS)
		if err != nil {
			return err
		}
		u.sec = sec
		native = sec.Native
		u.state.Secure = &Secure{TLS: u.opt.TLS, CAFile: sec.CAFile, ServerName: sec.ServerName, PasswordFile: sec.PasswordFile}
		if u.opt.Auth {
			u.state.Secure.User = target.SecureUser
		}
	}
	native.CPUs = u.opt.CPUs
	topo, err := target.Start(ctx, u.opt.Provider, u.opt.Image, u.opt.Topology, native)
	if err != nil {
		return err
	}
	u.topo = topo
	return nil
}

// Publish writes the state of the started topology (its nodes, addresses and node processes)
// to the state file and returns it.
func (u *Up) Publish() (State, error) {
	desc := u.topo.Describe()
	if desc.Kind == compose.KindSentinel && desc.MasterName == "" {
		desc.MasterName = u.opt.Topology.MasterName
	}
	st := u.state
	st.Ready, st.Addrs, st.Description, st.NodePids = time.Now(), u.topo.Addrs(), &desc, nodePids(u.topo, desc)
	if err := Write(u.opt.Dir, st); err != nil {
		return st, err
	}
	u.state = st
	return st, nil
}

// Stop stops the started topology and returns its Close error; later calls return the same.
func (u *Up) Stop() error {
	u.stopOnce.Do(func() {
		if u.topo != nil {
			u.stopErr = u.topo.Close()
		}
	})
	return u.stopErr
}

// Close stops the topology if Stop did not, then removes the password, the certificates and
// the state file.
func (u *Up) Close() {
	u.Stop()
	if u.sec != nil {
		u.sec.Remove()
	}
	os.Remove(Path(u.opt.Dir, u.opt.Name))
}

// Abandon removes the state file and the secrets without stopping anything: for a process
// about to quit at once. Native nodes die with it (compose gives them a parent-death signal);
// containers are removed by testcontainers' reaper once its session ends.
func (u *Up) Abandon() {
	os.Remove(Path(u.opt.Dir, u.opt.Name))
	os.RemoveAll(SecretsPath(u.opt.Dir, u.opt.Name))
}

// nodePids returns the node processes of topologies that expose them (native ones).
func nodePids(t compose.Topology, desc compose.Description) []int {
	var pids []int
	for _, n := range desc.Nodes {
		if pid := target.NodePid(t, n.Addr); pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}
