package main

import (
	"strings"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/target"
	"github.com/spf13/pflag"
)

// connFlags are how lockbench connects to a deployment given with --addr: the ACL user, the
// password files, sentinel's own credentials and TLS. They build one conn.Settings, which the
// topology check, lockbench's INFO connections and every driver take.
type connFlags struct {
	opt      conn.Options
	settings *conn.Settings // after check with --addr; for a topology lockbench starts, after it started
	child    []string       // after check: the flags a generator process is given
	// auth and opt.TLS without --addr: lockbench starts its topology with an ACL user and a
	// random password, and TLS only (see target.Secure).
	auth        bool
	startSecure bool // after check: no --addr, and --auth or --tls
	// noFiles makes check read no file and no environment: the password and TLS files are
	// taken as given, and the environment as holding a password (for parseOnly, which checks
	// documented command lines).
	noFiles bool
}

// add registers the flags. The addresses themselves are --addr (run.go).
func (c *connFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&c.opt.User, "user", "", "ACL user on the data nodes (with --addr); a redis:// URL may name it instead")
	fs.StringVar(&c.opt.PasswordFile, "password-file", "", "read the data nodes' password from the first line of this file (default: $"+conn.EnvPassword+", else $"+conn.EnvRedisCLIAuth+"); a password in a redis:// URL works too, with a warning: it shows in the process list")
	fs.StringVar(&c.opt.SentinelUser, "sentinel-user", "", "ACL user on the sentinels, for --topology sentinel when they have their own")
	fs.StringVar(&c.opt.SentinelPasswordFile, "sentinel-password-file", "", "the sentinels' own password, first line of this file (default: $"+conn.EnvSentinelPassword+")")
	fs.BoolVar(&c.opt.TLS, "tls", false, "connect with TLS (rediss:// and every --tls-* flag turn it on too); without --addr, start the topology TLS only, with a throwaway CA")
	fs.BoolVar(&c.auth, "auth", false, "without --addr: start every node of the topology with an ACL user and a random password (replication and sentinels included)")
	fs.StringVar(&c.opt.CAFile, "tls-ca-file", "", "PEM CA certificates that sign the servers' certificates (default: the system's)")
	fs.StringVar(&c.opt.CertFile, "tls-cert-file", "", "client certificate (PEM), for servers that demand one (tls-auth-clients yes); with --tls-key-file")
	fs.StringVar(&c.opt.KeyFile, "tls-key-file", "", "private key (PEM) of --tls-cert-file")
	fs.StringVar(&c.opt.ServerName, "tls-server-name", "", "name the servers' certificates must carry (default: the host dialled)")
	fs.BoolVar(&c.opt.InsecureSkipVerify, "tls-insecure-skip-verify", false, "do not check the servers' certificates (warns; not with --tls-ca-file)")
}

// connFlagNames are the flags add registers, for the checks and for workers' command lines.
var connFlagNames = []string{"user", "password-file", "sentinel-user", "sentinel-password-file", "tls", "tls-ca-file", "tls-cert-file", "tls-key-file", "tls-server-name", "tls-insecure-skip-verify"}

// emptyAddr refuses --addr "": an unset variable in CI, not a request for a private Redis.
const emptyAddr = "--addr is empty (an unset variable?): give the deployment's address, or leave --addr out for a private Redis"

// check builds the settings for the --addr addresses of spec, and returns the message for
// bad input, or "". Without --addr the connection flags have nothing to connect to.
func (c *connFlags) check(fs *pflag.FlagSet, addrs []string, spec compose.Spec, netem bool) string {
	for _, name := range []string{"collect", "referee"} {
		// The other flags that take an address: given empty, each would quietly turn its
		// feature off (results by file, no referee).
		if fl := fs.Lookup(name); fl != nil && fs.Changed(name) && strings.TrimSpace(fl.Value.String()) == "" {
			return "--" + name + " is empty (an unset variable?): give its address, or leave --" + name + " out"
		}
	}
	if len(addrs) == 0 && fs.Changed("addr") {
		// --addr "" or --addr "$REDIS_ADDR" with the variable unset: starting a private Redis
		// instead would give numbers that look like the deployment's.
		return emptyAddr
	}
	if len(addrs) == 0 {
		for _, name := range connFlagNames {
			if fs.Changed(name) && name != "tls" {
				return "--" + name + " is for a deployment given with --addr; for the Redis lockbench starts, --auth and --tls make the user, password and certificates"
			}
		}
		c.startSecure = c.auth || c.opt.TLS
		return ""
	}
	if c.auth {
		return "--auth is for the topology lockbench starts; for yours, give --user and --password-file"
	}
	c.opt.Addrs, c.opt.Topology = addrs, spec.Kind
	s, err := target.AttachSettings(c.opt, c.noFiles, netem)
	if err != nil {
		return err.Error()
	}
	c.settings = s
	c.child = childArgs(fs)
	return ""
}

// childArgs are the flags a generator process needs to connect as this one does, passwords
// aside (they go by environment, see conn.Settings.Env): only what was given.
func childArgs(fs *pflag.FlagSet) []string {
	var args []string
	for _, name := range connFlagNames {
		if name == "password-file" || name == "sentinel-password-file" || !fs.Changed(name) {
			continue
		}
		args = append(args, "--"+name+"="+fs.Lookup(name).Value.String())
	}
	return args
}
