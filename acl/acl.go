// Package acl says what a Redis ACL user needs for lockbench to run every driver against a
// deployment, and no more: the commands lockbench's drivers and lock libraries send (their Lua
// scripts' commands too, which Redis 7 checks against the caller), the commands lockbench itself
// runs (INFO, PING, SCAN and DEL between runs, the topology checks), the key patterns every
// driver's keys fall under, and the pub/sub channels its waiters listen on. All of them derive
// from --key-prefix. SetUser prints them as one ACL SETUSER command; Diagnose finds, on a live
// server, which of them a user lacks.
//
// The lists are kept by hand from drivers/, lockcore/ and the libraries (redsync, redislock,
// rueidislock, go-redis, rueidis); the end-to-end test that runs every driver as a user made
// from SetUser is what keeps them honest.
package acl

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// DefaultUser is the user name SetUser gives when Options.User is empty.
const DefaultUser = "lockbench"

// Grant is one command a lockbench user needs, and who sends it. Name is Redis' name, lower
// case, with "|" before a subcommand ("client|tracking").
type Grant struct {
	Name string
	Why  string
}

// Commands are the commands a lockbench user needs, in the order SetUser grants them. The
// connection's own HELLO and AUTH need no grant. Not granted on purpose: FLUSHALL (lockbench
// flushes only servers it started), CONFIG (the preflight reads the save schedule with CONFIG
// GET when it may, and says it could not otherwise: CONFIG GET also shows masterauth), KEYS,
// ACL. The clients also send CLIENT SETINFO on Redis 7.2 and later and ignore a refusal.
var Commands = []Grant{
	// Lock scripts: every driver's, sent as EVALSHA and, when the script cache lacks one, EVAL.
	{"evalsha", "every driver's lock scripts"},
	{"eval", "every driver's lock scripts (when the server's script cache lacks one), and Diagnose"},
	{"script|load", "the redisson driver's 3.52 profile loads a script after NOSCRIPT, as Redisson 3.46+ does"},
	{"wait", "lockcore (sync=wait, its default where a master has replicas) and the redisson driver's 3.43+ profiles wait for replicas after lock calls (WAITAOF, for lockcore:sync=aof on Redis 7.2+, is not granted: Redis 7.0 has no such command to grant)"},
	// What the scripts and the drivers run on lock keys.
	{"get", "naive, redsync, redislock, rueidislock locks; lockcore-fenced tokens"},
	{"set", "naive, redsync, redislock, rueidislock locks (SET NX PX)"},
	{"del", "releases; lockbench deletes its keys between runs"},
	{"exists", "lockcore and redisson scripts"},
	{"pexpire", "lease renewals"},
	{"pexpireat", "rueidislock renewals"},
	{"pttl", "scripts' remaining lease; lockbench's key audit"},
	{"getrange", "redislock (its obtain script)"},
	{"incr", "lockcore-fenced tokens"},
	{"hget", "reentrant locks' hold counts"},
	{"hset", "lockcore and redisson scripts"},
	{"hdel", "read-write locks"},
	{"hexists", "lockcore and redisson scripts"},
	{"hincrby", "reentrant locks"},
	{"hkeys", "read-write locks"},
	{"hlen", "read-write locks"},
	{"lindex", "fair locks' queues"},
	{"lpop", "fair locks' queues"},
	{"lrange", "fair locks' queues"},
	{"lrem", "fair locks' queues"},
	{"rpush", "fair locks' queues"},
	{"zadd", "fair locks' deadlines"},
	{"zincrby", "fair locks' deadlines"},
	{"zrange", "fair locks' deadlines"},
	{"zrem", "fair locks' deadlines"},
	{"zscore", "fair locks' deadlines"},
	{"type", "lockbench's key audit after a run"},
	// Waiters: unlock messages, sharded on a Redis 7 cluster.
	{"publish", "unlock messages (lockcore, redisson)"},
	{"subscribe", "waiters of lockcore and redisson locks"},
	{"unsubscribe", "waiters of lockcore and redisson locks"},
	{"spublish", "unlock messages on a Redis 7 cluster"},
	{"ssubscribe", "waiters on a Redis 7 cluster"},
	{"sunsubscribe", "waiters on a Redis 7 cluster"},
	{"client|tracking", "rueidislock (its waiters are woken by client-side caching invalidations)"},
	// lockbench itself.
	{"ping", "connection checks, the preflight's round trip"},
	{"time", "generator processes start together by the deployment's clock (lockbench worker --clock redis)"},
	{"info", "the topology check, the preflight, and commands and CPU per acquisition"},
	{"scan", "lockbench finds its own keys before, between and after runs (SCAN MATCH its key patterns, anchored at the start, each key checked against its exact shapes) to delete or count them"},
	// Cluster clients and lockbench's cluster check.
	{"cluster|slots", "cluster clients' slot map"},
	{"command", "go-redis cluster clients read the command table (COMMAND) to route commands"},
	{"cluster|info", "lockbench's cluster check"},
	{"cluster|nodes", "lockbench's view of the cluster's nodes"},
	{"asking", "cluster clients following an ASK redirect during a slot migration"},
	// Sentinel clients.
	{"role", "rueidis sentinel clients check that the master the sentinels name is one"},
}

// Options say whom SetUser makes. It is a plain value.
type Options struct {
	// User is the user's name; default DefaultUser.
	User string
	// KeyPrefix is lockbench's --key-prefix; it must not be empty.
	KeyPrefix string
	// Password, if not empty, is set as the user's password, given to Redis as its SHA-256
	// (#hex), so that the command carries no password. Empty: the user has none and cannot
	// log in until one is added (ACL SETUSER name >password).
	Password string
	// DB, if not 0, is the database lockbench's clients SELECT (a URL's /db).
	DB int
	// Keys are key patterns (globs) granted besides KeyPatterns: those of the keys an external
	// adapter's hello declares for the prefix's lock names (keyspace.Globs). Check refuses an
	// empty one and spaces.
	Keys []string
}

// SetUser returns the command that makes the user, as arguments: "ACL", "SETUSER", the name,
// "reset" (a user of that name loses whatever it had), then "on", the password hash, the key
// patterns, the channel patterns and the commands. It panics on an empty KeyPrefix, which
// would grant every key.
func SetUser(o Options) []string {
	if o.KeyPrefix == "" {
		panic("acl: empty KeyPrefix")
	}
	if o.User == "" {
		o.User = DefaultUser
	}
	args := []string{"ACL", "SETUSER", o.User, "reset", "on"}
	if o.Password != "" {
		sum := sha256.Sum256([]byte(o.Password))
		args = append(args, "#"+hex.EncodeToString(sum[:]))
	}
	for _, k := range dedupe(append(KeyPatterns(o.KeyPrefix), o.Keys...)) {
		args = append(args, "~"+k)
	}
	for _, c := range ChannelPatterns(o.KeyPrefix) {
		args = append(args, "&"+c)
	}
	for _, g := range Commands {
		args = append(args, "+"+g.Name)
	}
	if o.DB != 0 {
		args = append(args, fmt.Sprintf("+select|%d", o.DB))
	}
	return args
}

// Tagged is the hash-tagged form of a lock name starting with prefix, as Redisson (and lockcore,
// its protocol) writes it inside helper keys and channels: "{name" (the name's end and the
// closing brace follow), or the prefix itself when it has a hash tag of its own.
func Tagged(prefix string) string {
	if strings.Contains(prefix, "{") {
		return prefix
	}
	return "{" + prefix
}

// KeyPatterns returns the glob patterns of every key lockbench's drivers make for lock names
// that start with prefix (special characters in prefix escaped):
//   - the lock itself, prefix…: every driver;
//   - {prefix…}:…:rwlock_timeout:…: Redisson read-write locks' reader deadlines;
//   - redisson_lock_queue:{prefix…}, redisson_lock_timeout:{prefix…}: fair locks;
//   - redisson_lock_token:{prefix…}: fenced locks' tokens;
//   - redisson_unlock_latch:{prefix…}:…: the redisson driver's unlock latches (3.24+ profiles);
//   - rueidislock:N:prefix…: rueidislock's keys (its own key prefix, then a key number);
//   - the channels (see ChannelPatterns) too: Redisson's scripts, and lockcore's, declare the
//     channel they publish on among their keys, and Redis checks every declared key.
func KeyPatterns(prefix string) []string {
	p, t := GlobEscape(prefix), GlobEscape(Tagged(prefix))
	return dedupe(append([]string{
		p + "*",
		t + "*",
		"redisson_lock_queue:" + t + "*",
		"redisson_lock_timeout:" + t + "*",
		"redisson_lock_token:" + t + "*",
		"redisson_unlock_latch:" + t + "*",
		"rueidislock:*:" + p + "*",
	}, ChannelPatterns(prefix)...))
}

// ChannelPatterns returns the glob patterns of the pub/sub channels lockbench's drivers use for
// lock names that start with prefix: redisson_lock__channel:{prefix…} (unlock messages; a fair
// lock's per-waiter channels add ":id") and redisson_rwlock:{prefix…} (read-write locks).
func ChannelPatterns(prefix string) []string {
	t := GlobEscape(Tagged(prefix))
	return []string{"redisson_lock__channel:" + t + "*", "redisson_rwlock:" + t + "*"}
}

func dedupe(s []string) []string {
	out := s[:0]
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// GlobEscape quotes the characters Redis glob patterns treat specially, so that a prefix such as
// "bench[1]:" matches itself only.
func GlobEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Line joins args into one line that redis-cli reads back as the same arguments: an argument
// with a space, a quote, a backslash or a byte outside printable ASCII is double-quoted, with
// \" \\ and \xHH escapes.
func Line(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = quote(a)
	}
	return strings.Join(out, " ")
}

func quote(s string) string {
	plain := s != ""
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\'' || c == '\\' {
			plain = false
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c >= 0x7f:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
