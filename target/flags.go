package target

import (
	"errors"
	"strconv"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/conn"
	"github.com/spf13/pflag"
)

// Flags are the deployment as lockbench's commands take it on the command line: its shape
// (--topology, --master-name), how lockbench starts it (--provider, --image, --auth, --tls) or
// where it is (--addr), and how lockbench connects to one given with --addr: the ACL user, the
// password files, sentinel's own credentials and TLS. Check builds one conn.Settings of them,
// which the topology check, lockbench's INFO connections and every driver take; Spec is the
// Spec Open takes. A Flags is used by one goroutine.
type Flags struct {
	Topology, MasterName string
	Provider, Image      string
	Addrs                []string
	// Conn is the connection flags' options; Check adds the addresses and the topology's kind.
	Conn conn.Options
	// Auth and Conn.TLS without --addr: lockbench starts its topology with an ACL user and a
	// random password, and TLS only (see Secure).
	Auth bool
	// Offline makes Check read no file and no environment: the password and TLS files are
	// taken as given, and the environment as holding a password (for checking documented
	// command lines; see AttachSettings).
	Offline bool

	// Set by CheckShape and CheckConn.
	Shape       compose.Spec   // the parsed --topology and --master-name
	Settings    *conn.Settings // with --addr; for a topology lockbench starts, Target.Conn once started
	ChildArgs   []string       // the flags a generator process is given to connect as this one does
	StartSecure bool           // no --addr, and --auth or --tls
}

// ConnFlagNames are the connection flags Register adds, for the checks and for generator
// processes' command lines. The addresses themselves are --addr.
var ConnFlagNames = []string{"user", "password-file", "sentinel-user", "sentinel-password-file", "tls", "tls-ca-file", "tls-cert-file", "tls-key-file", "tls-server-name", "tls-insecure-skip-verify"}

// EmptyAddr refuses --addr "": an unset variable in CI, not a request for a private Redis.
const EmptyAddr = "--addr is empty (an unset variable?): give the deployment's address, or leave --addr out for a private Redis"

// Register adds the flags to fs, as lockbench run, sweep and worker take them.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Topology, "topology", compose.KindSingle, "deployment shape: single, sentinel, cluster or masters:N (N independent masters, 1 to "+strconv.Itoa(compose.MaxMasters)+"); started for the run unless --addr is given")
	fs.StringVar(&f.MasterName, "master-name", "", "sentinel master name, for --topology sentinel (default "+compose.DefaultMasterName+")")
	fs.StringVar(&f.Provider, "provider", ProviderNative, "how lockbench starts the topology: native (redis-server processes from PATH) or docker")
	fs.StringVar(&f.Image, "image", docker.DefaultImage, "Redis image for --provider docker ('lockbench image build' makes "+docker.LocalImage+" from this machine's redis-server)")
	fs.StringSliceVar(&f.Addrs, "addr", nil, "attach to an existing deployment of --topology instead of starting one, repeatable or comma separated: host:port, redis://[user@]host[:port][/db], rediss://… (TLS) or unix:///path (single, masters:N); the server (single), the sentinels (sentinel), any nodes (cluster), every master (masters:N). lockbench never FLUSHALLs it: before, between and after runs it deletes only the keys of its own shapes for --key-prefix (SCAN on every master, each key checked against the exact shapes), and a run refuses to start over such keys already there (see --clean-existing)")
	f.registerConn(fs)
}

// RegisterAttached adds the flags of a command that only attaches (lockbench check): no
// --provider or --image, and the shape and the addresses said briefly.
func (f *Flags) RegisterAttached(fs *pflag.FlagSet) {
	f.Provider = ProviderNative
	fs.StringVar(&f.Topology, "topology", compose.KindSingle, "deployment shape: single, sentinel, cluster or masters:N")
	fs.StringVar(&f.MasterName, "master-name", "", "sentinel master name, for --topology sentinel (default "+compose.DefaultMasterName+")")
	fs.StringSliceVar(&f.Addrs, "addr", nil, "the deployment, as lockbench run takes it (host:port, redis://, rediss://, unix://)")
	f.registerConn(fs)
}

// registerConn adds the connection flags (ConnFlagNames, and --auth).
func (f *Flags) registerConn(fs *pflag.FlagSet) {
	c := &f.Conn
	fs.StringVar(&c.User, "user", "", "ACL user on the data nodes (with --addr); a redis:// URL may name it instead")
	fs.StringVar(&c.PasswordFile, "password-file", "", "read the data nodes' password from the first line of this file (default: $"+conn.EnvPassword+", else $"+conn.EnvRedisCLIAuth+"); a password in a redis:// URL works too, with a warning: it shows in the process list")
	fs.StringVar(&c.SentinelUser, "sentinel-user", "", "ACL user on the sentinels, for --topology sentinel when they have their own")
	fs.StringVar(&c.SentinelPasswordFile, "sentinel-password-file", "", "the sentinels' own password, first line of this file (default: $"+conn.EnvSentinelPassword+")")
	fs.BoolVar(&c.TLS, "tls", false, "connect with TLS (rediss:// and every --tls-* flag turn it on too); without --addr, start the topology TLS only, with a throwaway CA")
	fs.BoolVar(&f.Auth, "auth", false, "without --addr: start every node of the topology with an ACL user and a random password (replication and sentinels included)")
	fs.StringVar(&c.CAFile, "tls-ca-file", "", "PEM CA certificates that sign the servers' certificates (default: the system's)")
	fs.StringVar(&c.CertFile, "tls-cert-file", "", "client certificate (PEM), for servers that demand one (tls-auth-clients yes); with --tls-key-file")
	fs.StringVar(&c.KeyFile, "tls-key-file", "", "private key (PEM) of --tls-cert-file")
	fs.StringVar(&c.ServerName, "tls-server-name", "", "name the servers' certificates must carry (default: the host dialled)")
	fs.BoolVar(&c.InsecureSkipVerify, "tls-insecure-skip-verify", false, "do not check the servers' certificates (warns; not with --tls-ca-file)")
}

// Attached reports whether the deployment is given (--addr), not started by lockbench.
func (f *Flags) Attached() bool { return len(f.Addrs) > 0 }

// CheckShape parses the shape into Shape (ParseTopology) and checks how lockbench is to start
// it (CheckProvider); given says which flags the command line set. The error wraps ErrBadSpec
// and names the flag.
func (f *Flags) CheckShape(given func(flag string) bool) error {
	spec, err := ParseTopology(f.Topology, f.MasterName, given("master-name"))
	if err != nil {
		return err
	}
	f.Shape = spec
	return CheckProvider(f.Provider, f.Image, f.Attached(), given)
}

// CheckConn builds the settings for the --addr addresses of Shape, after CheckShape, with the
// connections proxied (--net) or not. Without --addr the connection flags have nothing to
// connect to, but --auth and --tls, which secure the topology lockbench starts. The error
// wraps ErrBadSpec; its text is the complaint alone.
func (f *Flags) CheckConn(fs *pflag.FlagSet, proxied bool) error {
	if !f.Attached() && fs.Changed("addr") {
		// --addr "" or --addr "$REDIS_ADDR" with the variable unset: starting a private Redis
		// instead would give numbers that look like the deployment's.
		return &badSpecError{errors.New(EmptyAddr)}
	}
	if !f.Attached() {
		for _, name := range ConnFlagNames {
			if fs.Changed(name) && name != "tls" {
				return &badSpecError{errors.New("--" + name + " is for a deployment given with --addr; for the Redis lockbench starts, --auth and --tls make the user, password and certificates")}
			}
		}
		f.StartSecure = f.Auth || f.Conn.TLS
		return nil
	}
	if f.Auth {
		return &badSpecError{errors.New("--auth is for the topology lockbench starts; for yours, give --user and --password-file")}
	}
	f.Conn.Addrs, f.Conn.Topology = f.Addrs, f.Shape.Kind
	s, err := AttachSettings(f.Conn, f.Offline, proxied)
	if err != nil {
		return err
	}
	f.Settings = s
	f.ChildArgs = childArgs(fs)
	return nil
}

// childArgs are the flags a generator process needs to connect as this one does, passwords
// aside (they go by environment, see conn.Settings.Env): only what was given.
func childArgs(fs *pflag.FlagSet) []string {
	var args []string
	for _, name := range ConnFlagNames {
		if name == "password-file" || name == "sentinel-password-file" || !fs.Changed(name) {
			continue
		}
		args = append(args, "--"+name+"="+fs.Lookup(name).Value.String())
	}
	return args
}

// Spec is the Spec Open takes for the flags, after the checks: attach with Settings, or start
// Shape with the provider, the image, and --auth and --tls. The caller adds what the flags do
// not say (Net, Native's host and CPUs, Log, OnStart, OnConnected).
func (f *Flags) Spec() Spec {
	s := Spec{Topology: f.Shape}
	if f.Attached() {
		s.Attach = f.Settings
		return s
	}
	s.Provider, s.Image = f.Provider, f.Image
	s.Auth, s.TLS = f.StartSecure && f.Auth, f.StartSecure && f.Conn.TLS
	return s
}
