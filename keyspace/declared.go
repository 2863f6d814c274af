package keyspace

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/lockbench/lockbench/acl"
)

// NamePlaceholder stands for a lock name in a declared key pattern: "{name}:tokens" is the key
// "bench:7:tokens" of the lock "bench:7", "queue:{{name}}" the key "queue:{bench:7}".
const NamePlaceholder = "{name}"

// Limits of what an adapter may declare (see ParseDeclared).
const (
	// MaxDeclared is how many patterns one adapter may declare.
	MaxDeclared = 8
	// MaxDeclaredLen is the longest pattern, in bytes.
	MaxDeclaredLen = 200
)

// ErrBadDeclared is wrapped by ParseDeclared's errors.
var ErrBadDeclared = errors.New("keyspace: bad declared key pattern")

// Declared is a key shape an external adapter declares of its own (its hello's keys): literal
// text before and after the lock name, so that it names, for each lock, exactly one key derived
// from that lock's name and nothing else. It is a plain value; the zero Declared is none.
type Declared struct {
	// Pattern is the pattern as declared, e.g. "{name}:tokens".
	Pattern string
	// Before and After are the literal text around the lock name.
	Before, After string
}

// ParseDeclared reads one declared key pattern: NamePlaceholder exactly once, with literal text
// around it, at least one character of it, of printable ASCII other than space and the glob
// characters * ? [ ] \ (a declared key is one literal name per lock, never a wildcard), and the
// text after the name not starting with a digit (the key "P1" + "5" of lock P1 would be lock
// P15's name). Every other character, braces included, is literal. The error wraps
// ErrBadDeclared and says which rule the pattern breaks.
func ParseDeclared(pattern string) (Declared, error) {
	bad := func(format string, a ...any) (Declared, error) {
		return Declared{}, fmt.Errorf("%w %q: %s", ErrBadDeclared, pattern, fmt.Sprintf(format, a...))
	}
	switch n := strings.Count(pattern, NamePlaceholder); {
	case len(pattern) > MaxDeclaredLen:
		return bad("longer than %d bytes", MaxDeclaredLen)
	case n == 0:
		return bad("no %s: a declared key is derived from the lock name, e.g. %s:tokens", NamePlaceholder, NamePlaceholder)
	case n > 1:
		return bad("%s more than once: one lock name per key", NamePlaceholder)
	case pattern == NamePlaceholder:
		return bad("the lock name itself, which is lockbench's key already: declare only other keys")
	}
	before, after, _ := strings.Cut(pattern, NamePlaceholder)
	for _, s := range []string{before, after} {
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c <= ' ' || c >= 0x7f:
				return bad("byte %q: only printable ASCII without spaces around %s", c, NamePlaceholder)
			case strings.IndexByte(`*?[]\`, c) >= 0:
				return bad("glob character %q: a declared key is literal text around %s, never a wildcard", c, NamePlaceholder)
			}
		}
	}
	if after != "" && after[0] >= '0' && after[0] <= '9' {
		return bad("a digit right after %s: with lock P1 it names lock P1%c's key", NamePlaceholder, after[0])
	}
	return Declared{Pattern: pattern, Before: before, After: after}, nil
}

// ParseDeclaredList reads a hello's keys with ParseDeclared, refusing more than MaxDeclared and
// a pattern declared twice.
func ParseDeclaredList(patterns []string) ([]Declared, error) {
	if len(patterns) > MaxDeclared {
		return nil, fmt.Errorf("%w: %d patterns, at most %d", ErrBadDeclared, len(patterns), MaxDeclared)
	}
	var out []Declared
	for i, p := range patterns {
		d, err := ParseDeclared(p)
		if err != nil {
			return nil, err
		}
		for _, q := range patterns[:i] {
			if q == p {
				return nil, fmt.Errorf("%w %q: declared twice", ErrBadDeclared, p)
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// Key is the declared key of the lock name.
func (d Declared) Key(name string) string { return d.Before + name + d.After }

// Glob is the SCAN MATCH and ACL key pattern of the declared keys of the lock names starting
// with prefix (special characters in prefix escaped): a prefilter, as the lock's glob is.
func (d Declared) Glob(prefix string) string {
	return acl.GlobEscape(d.Before) + acl.GlobEscape(prefix) + "*" + acl.GlobEscape(d.After)
}

// shape is d's Shape in the keyspace of prefix, whose lock names match the expression name.
func (d Declared) shape(prefix, name string) Shape {
	s := Shape{
		Name:    "declared",
		Pattern: d.Before + prefix + "<n>" + d.After,
		Glob:    d.Glob(prefix),
		re:      regexp.MustCompile("^" + regexp.QuoteMeta(d.Before) + name + regexp.QuoteMeta(d.After) + "$"),
	}
	if d.Before == "" {
		s.scan = acl.GlobEscape(prefix) + "*" // the lock's glob finds these too: no SCAN of their own
	}
	return s
}

// Globs returns the globs of ds for prefix (Declared.Glob): the key patterns an ACL user
// needs for an adapter's declared keys (acl.Options.Keys).
func Globs(prefix string, ds []Declared) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Glob(prefix))
	}
	return out
}
