package keyspace_test

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/keyspace"
	"github.com/redis/rueidis"
)

// ParseDeclared takes literal text around one {name}, and refuses anything that could name a
// key not derived from a lock name, saying which rule the pattern breaks.
func TestParseDeclared(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern       string
		before, after string
		bad           string // "" accepted; else a part of the error
	}{
		// Accepted.
		{"{name}:tokens", "", ":tokens", ""},
		{"queue:{name}", "queue:", "", ""},
		{"queue:{{name}}", "queue:{", "}", ""},
		{"a:{name}:b", "a:", ":b", ""},
		{"{name}x", "", "x", ""},
		// Refused.
		{"*", "", "", "no {name}"},
		{"", "", "", "no {name}"},
		{"tokens", "", "", "no {name}"},
		{"{name}", "", "", "the lock name itself"},
		{"{name}:{name}", "", "", "more than once"},
		{"{name}*", "", "", "glob character '*'"},
		{"*:{name}", "", "", "glob character '*'"},
		{"{name}:?", "", "", "glob character '?'"},
		{"[ab]{name}", "", "", "glob character '['"},
		{`{name}\x`, "", "", "glob character '\\\\'"},
		{"{name} x", "", "", "printable ASCII"},
		{"{name}:\n", "", "", "printable ASCII"},
		{"{name}:é", "", "", "printable ASCII"},
		{"{name}5", "", "", "a digit right after {name}"},
		{"{NAME}:x", "", "", "no {name}"},
		{"{name}:" + strings.Repeat("x", keyspace.MaxDeclaredLen), "", "", "longer than"},
	} {
		d, err := keyspace.ParseDeclared(tc.pattern)
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%q: %v; want it accepted", tc.pattern, err)
		case tc.bad == "" && (d.Before != tc.before || d.After != tc.after || d.Pattern != tc.pattern):
			t.Errorf("%q: %+v; want %q and %q around the name", tc.pattern, d, tc.before, tc.after)
		case tc.bad != "" && (!errors.Is(err, keyspace.ErrBadDeclared) || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%q: %v; want ErrBadDeclared saying %q", tc.pattern, err, tc.bad)
		}
	}
	if _, err := keyspace.ParseDeclaredList([]string{"{name}:a", "{name}:a"}); !errors.Is(err, keyspace.ErrBadDeclared) || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a pattern twice: %v", err)
	}
	many := make([]string, keyspace.MaxDeclared+1)
	for i := range many {
		many[i] = "{name}:" + strings.Repeat("a", i+1)
	}
	if _, err := keyspace.ParseDeclaredList(many); !errors.Is(err, keyspace.ErrBadDeclared) {
		t.Errorf("%d patterns: %v; want refused", len(many), err)
	}
	if ds, err := keyspace.ParseDeclaredList(many[:2]); err != nil || len(ds) != 2 {
		t.Errorf("two patterns: %v, %v", ds, err)
	}
}

func mustDeclared(t *testing.T, patterns ...string) []keyspace.Declared {
	t.Helper()
	ds, err := keyspace.ParseDeclaredList(patterns)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// A keyspace with declared shapes owns their keys for its own lock names, and nothing else:
// not another prefix's, not a lookalike; its globs find them, and the ACL globs admit them.
func TestDeclaredShapes(t *testing.T) {
	t.Parallel()
	ds := mustDeclared(t, "{name}:tokens", "queue:{{name}}")
	k := keyspace.New("lb:", ds...)
	plain := keyspace.New("lb:")
	for key, want := range map[string]string{
		"lb:3:tokens":   "lb:<n>:tokens",
		"lb:0:tokens":   "lb:<n>:tokens",
		"queue:{lb:12}": "queue:{lb:<n>}",
	} {
		s, ok := k.Match(key)
		if !ok || s.Name != "declared" || s.Pattern != want {
			t.Errorf("%s: %+v, %v; want declared shape %s", key, s, ok, want)
		}
		if plain.Owns(key) {
			t.Errorf("%s is owned without the declaration", key)
		}
		if !slices.ContainsFunc(k.Globs(), func(g string) bool { return globMatch(g, key) }) {
			t.Errorf("%s: no glob of %v finds it", key, k.Globs())
		}
		if !slices.ContainsFunc(keyspace.Globs("lb:", ds), func(g string) bool { return globMatch(g, key) }) {
			t.Errorf("%s: no ACL glob of %v admits it", key, keyspace.Globs("lb:", ds))
		}
	}
	for _, key := range []string{
		"lb:3:tokens:x", "lb:x:tokens", "lb:03:tokens", "lb::tokens", "x:lb:3:tokens", "lb:3:token",
		"queue:lb:12", "queue:{lb:12}x", "queue:{other:1}", "myqueue:{lb:1}", "other:3:tokens", "tokens",
	} {
		if k.Owns(key) {
			t.Errorf("%s is owned; it is no lock name's declared key", key)
		}
	}
	if got, want := len(k.Globs()), len(plain.Globs())+1; got != want {
		t.Errorf("globs %v: want one more than lockbench's own (a declared key after the name is found by the lock's glob)", k.Globs())
	}
}

// globMatch is Redis' glob for the patterns these tests use.
func globMatch(glob, key string) bool {
	ok, _ := path.Match(strings.NewReplacer("{", `\{`, "}", `\}`).Replace(glob), key)
	return ok
}

// Find returns the declared keys of the keyspace's lock names with lockbench's own, and leaves
// their lookalikes.
func TestFindDeclared(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: srv.Addrs(), ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	ours := []string{"lb:1", "lb:1:tokens", "queue:{lb:2}"}
	theirs := []string{"lb:1:tokens:x", "queue:{lb:x}", "queue:lb:2", "queue:{app:2}"}
	for _, key := range append(slices.Clone(ours), theirs...) {
		if err := c.Do(ctx, c.B().Set().Key(key).Value("v").Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	found, err := keyspace.New("lb:", mustDeclared(t, "{name}:tokens", "queue:{{name}}")...).Find(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range found {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	if want := slices.Sorted(slices.Values(ours)); !slices.Equal(names, want) {
		t.Errorf("Find = %v, want %v", names, want)
	}
}
