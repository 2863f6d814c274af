package bench

import (
	"errors"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/acl"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/keyspace"
	"github.com/lockbench/lockbench/target"
	"github.com/redis/rueidis"
)

// attach starts a private redis-server, lets setup fill it as its owner would, and attaches to
// it as to a deployment lockbench did not start, as user ("" for the default user) with password.
func attach(t *testing.T, setup func(c rueidis.Client), user, password string) *target.Target {
	t.Helper()
	srv := redistest.NewServer(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: srv.Addrs(), DisableCache: true, ForceSingleClient: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if setup != nil {
		setup(c)
	}
	opt := conn.Options{Addrs: srv.Addrs(), Topology: "single", User: user}
	if password != "" {
		opt.Getenv = func(name string) string {
			if name == conn.EnvPassword {
				return password
			}
			return ""
		}
	}
	settings, err := conn.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	tgt, err := target.Open(t.Context(), target.Spec{Attach: settings})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	return tgt
}

func do(t *testing.T, c rueidis.Client, args ...string) {
	t.Helper()
	if err := c.Do(t.Context(), c.B().Arbitrary(args[0]).Args(args[1:]...).Build()).Error(); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
}

// Before the first run on a deployment lockbench attached to: a prefix that begins someone
// else's keys is refused, keys of lockbench's own shapes already there are refused unless
// cleanExisting, and a clean keyspace gives the record the cleanups fill. Nothing is deleted.
func TestCheckKeyspace(t *testing.T) {
	t.Parallel()
	tgt := attach(t, func(c rueidis.Client) {
		do(t, c, "SET", "shop:users", "theirs")
		do(t, c, "HSET", "old:3", "owner:1", "1")
		do(t, c, "PEXPIRE", "old:3", "600000")
	}, "", "")
	rep := &lines{}
	cases := []struct {
		prefix string
		clean  bool
		want   error // nil: go on
	}{
		{"shop:", false, ErrForeignKeys},
		{"old:", false, ErrKeysExist},
		{"old:", true, nil},
		{"new:", false, nil},
		{"ab", false, ErrBadSpec}, // too short to attach with
	}
	for _, tc := range cases {
		cleanup, err := CheckKeyspace(t.Context(), tgt, tc.prefix, tc.clean, rep)
		switch {
		case tc.want != nil && (!errors.Is(err, tc.want) || !errors.Is(err, ErrBadSpec)):
			t.Errorf("%s (clean %v): %v; want bad input wrapping %v", tc.prefix, tc.clean, err, tc.want)
		case tc.want == nil && (err != nil || cleanup == nil || cleanup.Prefix != tc.prefix):
			t.Errorf("%s (clean %v): %+v, %v; want the cleanup record", tc.prefix, tc.clean, cleanup, err)
		}
	}
	if cleanup, _ := CheckKeyspace(t.Context(), tgt, "old:", true, rep); cleanup.Existing != 1 || !strings.Contains(rep.String(), "deleting 1 keys") {
		t.Errorf("existing %d, lines %q; want the one key named for deletion", cleanup.Existing, rep)
	}
	// Only the first run's cleaning deletes: the check touched nothing.
	n, err := tgt.Masters()[0].Client.Do(t.Context(), tgt.Masters()[0].Client.B().Dbsize().Build()).AsInt64()
	if err != nil || n != 2 {
		t.Errorf("%d keys after the checks (%v); want both still there", n, err)
	}
	started := openSingle(t)
	if cleanup, err := CheckKeyspace(t.Context(), started, "x", false, rep); cleanup != nil || err != nil {
		t.Errorf("a topology lockbench started: %+v, %v; want nothing checked (it is flushed)", cleanup, err)
	}
}

// A user whose keys are limited to bench:* ('lockbench acl --key-prefix bench:') is refused the
// default prefix before anything is measured, told the prefix to use; its own prefix is fine.
func TestKeyAccess(t *testing.T) {
	t.Parallel()
	const user, password = "bench", "pw-for-bench"
	tgt := attach(t, func(c rueidis.Client) {
		do(t, c, acl.SetUser(acl.Options{User: user, KeyPrefix: "bench:", Password: password})...)
	}, user, password)
	_, err := KeyAccess(t.Context(), tgt, "lockbench:")
	if !errors.Is(err, ErrKeysRefused) || !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), "run with --key-prefix bench:") {
		t.Errorf("the default prefix: %v; want refused, naming --key-prefix bench:", err)
	}
	if warn, err := KeyAccess(t.Context(), tgt, "bench:"); err != nil || len(warn) != 0 {
		t.Errorf("its own prefix: %v (warnings %q); want allowed", err, warn)
	}
	// An adapter's declared key outside the user's patterns: a warning that names it and the
	// acl flag that grants it; inside them (bench:<n>:tokens), nothing.
	queue, err := keyspace.ParseDeclared("queue:{name}")
	if err != nil {
		t.Fatal(err)
	}
	warn, err := KeyAccess(t.Context(), tgt, "bench:", queue)
	if err != nil || len(warn) != 1 || !strings.Contains(warn[0], "key queue:bench:0") || !strings.Contains(warn[0], "--adapter-keys 'queue:{name}'") {
		t.Errorf("an undeclared key of the user's: %v, warnings %q; want one naming the key and --adapter-keys", err, warn)
	}
	tokens, _ := keyspace.ParseDeclared("{name}:tokens")
	if warn, err := KeyAccess(t.Context(), tgt, "bench:", tokens); err != nil || len(warn) != 0 {
		t.Errorf("a declared key under the prefix: %v, warnings %q; want allowed", err, warn)
	}
}
