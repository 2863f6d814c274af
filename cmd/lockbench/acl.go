package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/lockbench/lockbench/acl"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/keyspace"
	"github.com/lockbench/lockbench/workloads"
)

const aclExamples = `
Examples:
  # The user for runs with --key-prefix bench:, its password from a file (given to Redis hashed):
  lockbench acl --key-prefix bench: --user bench --password-file pass | redis-cli -h redis.internal --user admin
  # (redis-cli takes the admin's password from $REDISCLI_AUTH). ACLs are per node: on a cluster
  # or a sentinel deployment, run it on every data node; save it with ACL SAVE or in the config.

  # Then run as that user:
  lockbench run --addr redis://bench@redis.internal:6379 --password-file pass --key-prefix bench:

Output (stdout): one ACL SETUSER line that redis-cli reads back as it is. It grants the commands
lockbench's drivers, their lock scripts and lockbench itself send, on the keys and pub/sub
channels of --key-prefix only; 'reset' first, so a user of that name loses whatever it had.
With --explain, stderr says why each command is there. Not granted: FLUSHALL, CONFIG (the
preflight then cannot read the save schedule, and says so), KEYS, ACL. Needs Redis 6.2 (pub/sub
channel rules); a run names what a user lacks on Redis 7.0 and later.
`

// aclCommand is lockbench acl: the least-privilege user for runs with a key prefix.
func aclCommand(args []string, stdout, stderr io.Writer) int {
	fs := newCmdFlagSet("acl", stderr)
	var o acl.Options
	var pwFile string
	fs.StringVar(&o.KeyPrefix, "key-prefix", workloads.DefaultKeyPrefix, "the --key-prefix of the runs: the user gets the keys and channels of lock names starting with it")
	fs.StringVar(&o.User, "user", acl.DefaultUser, "the user's name")
	fs.StringVar(&pwFile, "password-file", "", "the user's password, first line of this file; the line carries its SHA-256, never the password (default: none, the user cannot log in until you add one)")
	fs.IntVar(&o.DB, "db", 0, "the database the runs use (a URL's /db), when not 0")
	var adapterKeys []string
	fs.StringArrayVar(&adapterKeys, "adapter-keys", nil, "a key pattern an external adapter's hello declares (\"{name}:tokens\"; repeat the flag for each; see docs/external-drivers.md): granted for the lock names of --key-prefix too")
	explain := fs.Bool("explain", false, "say on stderr why each command is granted")
	bad := fs.bad
	if code, done := fs.parse(args, stdout, "Usage: lockbench acl [--key-prefix P] [--user NAME] [--password-file F]\n\nPrint the ACL SETUSER line of a Redis user that may run lockbench and nothing else.", aclExamples); done {
		return code
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q", fs.Arg(0))
	}
	declared, err := keyspace.ParseDeclaredList(adapterKeys)
	if err != nil {
		return bad("--adapter-keys: %v", err)
	}
	o.Keys = keyspace.Globs(o.KeyPrefix, declared)
	if err := o.Check(); err != nil {
		return bad("--%v", err)
	}
	if flagsOnly(stdout) {
		return exitOK
	}
	if pwFile != "" {
		var err error
		if o.Password, err = conn.ReadPasswordFile("--password-file", pwFile); err != nil {
			return bad("%s", strings.TrimPrefix(err.Error(), conn.ErrBadInput.Error()+": "))
		}
	}
	fmt.Fprintln(stdout, acl.Line(acl.SetUser(o)))
	if pwFile == "" {
		fmt.Fprintf(stderr, "lockbench acl: no --password-file: user %s has no password and cannot log in until you add one (ACL SETUSER %s >password)\n", o.User, o.User)
	}
	if *explain {
		for _, g := range acl.Commands {
			fmt.Fprintf(stderr, "+%-16s %s\n", g.Name, g.Why)
		}
		fmt.Fprintf(stderr, "keys:     %s\nchannels: %s\n", strings.Join(append(acl.KeyPatterns(o.KeyPrefix), o.Keys...), " "), strings.Join(acl.ChannelPatterns(o.KeyPrefix), " "))
	}
	return exitOK
}
