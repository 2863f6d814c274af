// Package keyspace knows the exact names of the keys lockbench's drivers and lock kinds create
// on a deployment for a --key-prefix P, so that lockbench can find, count and delete its own keys
// on a deployment it attached to and never anyone else's. Lock names are P followed by a decimal
// index (P0, P1, …; see workloads' keyNames), and every key is one of these shapes, anchored at
// the start of the name, with T the hash-tagged lock name ("{P<n>}", or "P<n>" when P has a hash
// tag of its own, as Redisson writes it):
//
//	P<n>                                     the lock, every driver (a string or a hash)
//	T:<owner>:rwlock_timeout[:<i>]           read-write locks' reader deadlines (lockcore, redisson)
//	redisson_lock_queue:T                    fair locks' queues (lockcore-fair, redisson-fair)
//	redisson_lock_timeout:T                  fair locks' deadlines
//	redisson_lock_token:T                    fenced locks' token counters (lockcore-fenced, redisson-fenced)
//	redisson_unlock_latch:T:<hex id>         the redisson driver's unlock latches (3.24+ profiles)
//	rueidislock:<k>:P<n>                     rueidislock's keys (its key prefix, then a key number)
//	<before>P<n><after>                      an external adapter's declared keys (Declared), for that run
//
// Pub/sub channels are no keys (PUBLISH creates none); the safety referee and the protected
// resource live on a Redis of their own (package referee refuses one of the deployment). Each
// shape gives a SCAN MATCH glob, anchored at the start, to find candidates, and an exact
// pattern that a key found must match before lockbench deletes or counts it: the glob of the
// lock, P*, also finds "P12abc" or "Pcfg", which are not lockbench's.
//
// The globs are among the key patterns package acl grants a lockbench user (acl.KeyPatterns);
// this package's tests keep the two in step.
package keyspace

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/acl"
)

// MinPrefixLen is the shortest --key-prefix lockbench accepts on a deployment it attached to:
// shorter prefixes begin too many names that are someone else's.
const MinPrefixLen = 3

// Shape is one kind of key lockbench makes for the lock names of a prefix.
type Shape struct {
	// Name says which key it is: "lock", "rwlock_timeout", "fair_queue", "fair_timeout",
	// "fencing_token", "unlock_latch" or "rueidislock".
	Name string
	// Pattern is the shape written for people, with <n> for a lock's index (and <owner>, <id>,
	// <k> for the other variable parts): "redisson_lock_queue:{lockbench:<n>}". A result's
	// cleanup counts keys by it.
	Pattern string
	// Glob is the SCAN MATCH pattern that finds every key of the shape, and others: a prefilter.
	// It is among the key patterns acl.KeyPatterns grants.
	Glob string
	// scan is the glob Globs scans with for the shape: Glob, or one that covers several shapes'
	// (every SCAN walks the whole keyspace of a node, so fewer globs cost less).
	scan string
	re   *regexp.Regexp
}

// Match reports whether key is of the shape.
func (s Shape) Match(key string) bool { return s.re.MatchString(key) }

// Keyspace is the shapes of one prefix's keys. It is immutable, safe for concurrent use.
type Keyspace struct {
	prefix string
	shapes []Shape
}

// index is a lock name's decimal index as strconv.Itoa writes it: no sign, no leading zero.
const index = `(?:0|[1-9][0-9]*)`

// New returns the keyspace of prefix, with the shapes an external adapter declared (Declared:
// its hello's keys) beside lockbench's own. An empty prefix would make every decimal number a
// lock: New panics on it, as acl.SetUser does.
func New(prefix string, declared ...Declared) *Keyspace {
	if prefix == "" {
		panic("keyspace: empty prefix")
	}
	name := regexp.QuoteMeta(prefix) + index // a lock name, P<n>
	tag, tagGlob := `\{`+name+`\}`, "{"+acl.GlobEscape(prefix)+"*"
	if strings.Contains(prefix, "{") { // its own hash tag: Redisson does not add one
		tag, tagGlob = name, acl.GlobEscape(prefix)+"*"
	}
	tagShown := acl.Tagged(prefix) + "<n>"
	if !strings.Contains(prefix, "{") {
		tagShown += "}"
	}
	helper := func(name, family, tail, tailShown string) Shape {
		return Shape{
			Name:    name,
			Pattern: family + ":" + tagShown + tailShown,
			Glob:    family + ":" + tagGlob,
			scan:    "redisson_*:" + tagGlob, // the four families of Redisson's helper keys at once
			re:      regexp.MustCompile("^" + family + ":" + tag + tail + "$"),
		}
	}
	k := &Keyspace{prefix: prefix, shapes: []Shape{
		{Name: "lock", Pattern: prefix + "<n>", Glob: acl.GlobEscape(prefix) + "*", re: regexp.MustCompile("^" + name + "$")},
		{Name: "rwlock_timeout", Pattern: tagShown + ":<owner>:rwlock_timeout[:<i>]", Glob: tagGlob,
			re: regexp.MustCompile("^" + tag + `:.+:rwlock_timeout(?::[0-9]+)?$`)},
		helper("fair_queue", "redisson_lock_queue", "", ""),
		helper("fair_timeout", "redisson_lock_timeout", "", ""),
		helper("fencing_token", "redisson_lock_token", "", ""),
		helper("unlock_latch", "redisson_unlock_latch", ":[0-9a-f]+", ":<id>"),
		{Name: "rueidislock", Pattern: "rueidislock:<k>:" + prefix + "<n>", Glob: "rueidislock:*:" + acl.GlobEscape(prefix) + "*",
			re: regexp.MustCompile("^rueidislock:[0-9]+:" + name + "$")},
	}}
	for _, d := range declared {
		if d.Pattern != "" {
			k.shapes = append(k.shapes, d.shape(prefix, name))
		}
	}
	return k
}

// Prefix returns the prefix the keyspace was made for.
func (k *Keyspace) Prefix() string { return k.prefix }

// Shapes returns the shapes, the lock first.
func (k *Keyspace) Shapes() []Shape { return slices.Clone(k.shapes) }

// Globs returns the SCAN MATCH globs that together find every key of the keyspace: four, as
// one glob finds the keys of Redisson's four helper families (queue, timeout, token, latch),
// and three when the prefix has a hash tag of its own (the lock's glob finds the read-write
// timeouts too). A key they find must still pass Match.
func (k *Keyspace) Globs() []string {
	var out []string
	for _, s := range k.shapes {
		g := s.scan
		if g == "" {
			g = s.Glob
		}
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// PrefixGlob is the SCAN MATCH glob of every key that starts with the prefix: where keys that
// are not lockbench's (Foreign) tell that the prefix is someone else's too.
func (k *Keyspace) PrefixGlob() string { return k.shapes[0].Glob }

// Match returns the shape of key, if key is one of lockbench's keys for the prefix.
func (k *Keyspace) Match(key string) (Shape, bool) {
	for _, s := range k.shapes {
		if s.re.MatchString(key) {
			return s, true
		}
	}
	return Shape{}, false
}

// Owns reports whether key is one of lockbench's keys for the prefix.
func (k *Keyspace) Owns(key string) bool {
	_, ok := k.Match(key)
	return ok
}

// dataPrefixes begin the names of lockbench's own data that is no lock's: the worker results
// of package collect, and the marks and counts of packages referee and resource when their
// Redis is this one (a collect store may be the deployment under test).
var dataPrefixes = []string{"lockbench:collect:", "lockbench:referee:", "lockbench:resource:"}

// IsData reports whether key is lockbench's own data that is no lock's (a collect store's
// results, a referee's marks): never deleted by the cleanup, and no sign that a prefix also
// begins someone else's keys.
func IsData(key string) bool {
	for _, p := range dataPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// CheckPrefix returns an error unless prefix is long enough to attach with (MinPrefixLen).
func CheckPrefix(prefix string) error {
	if n := len([]rune(prefix)); n < MinPrefixLen {
		return fmt.Errorf("--key-prefix %q is too generic for a deployment lockbench did not start: "+
			"shorter than %d characters (%d), it begins too many names that are not lockbench's; pick a specific one, e.g. --key-prefix bench:%s",
			prefix, MinPrefixLen, n, prefix)
	}
	return nil
}
