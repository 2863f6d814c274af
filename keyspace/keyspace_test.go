package keyspace_test

import (
	"context"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/acl"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/keyspace"
	"github.com/redis/rueidis"
)

const owner = "6f1c0b3e-9a55-4a43-8f0e-1c2d3e4f5a6b:17"

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		ours   map[string]string // key → shape
		others []string
	}{
		{
			prefix: "lockbench:",
			ours: map[string]string{
				"lockbench:0":    "lock",
				"lockbench:1234": "lock",
				"{lockbench:3}:" + owner + ":rwlock_timeout":           "rwlock_timeout",
				"{lockbench:3}:" + owner + ":write:rwlock_timeout:12":  "rwlock_timeout",
				"redisson_lock_queue:{lockbench:7}":                    "fair_queue",
				"redisson_lock_timeout:{lockbench:7}":                  "fair_timeout",
				"redisson_lock_token:{lockbench:0}":                    "fencing_token",
				"redisson_unlock_latch:{lockbench:2}:0a1b2c3d4e5f6789": "unlock_latch",
				"rueidislock:0:lockbench:5":                            "rueidislock",
				"rueidislock:12:lockbench:5":                           "rueidislock",
			},
			others: []string{
				"lockbench:", "lockbench:cfg", "lockbench:12abc", "lockbench:007", "lockbench:-1", "lockbench:1:x",
				"app:lockbench:x", "app:lockbench:1", "x{lockbench:1}", "mylockbench", "mylockbench:1", "cache:lockbench:42",
				"{lockbench:3}", "{lockbench:3}:cfg", "{lockbench:x}:o:rwlock_timeout", "{lockbench:3}::rwlock_timeout",
				"{lockbench:3}:o:rwlock_timeout:x", "redisson_lock_queue:{other}", "redisson_lock_queue:{lockbench:x}",
				"redisson_lock_queue:{lockbench:1}:x", "redisson_lock_queue:lockbench:1", "redisson_lock_token:{lockbench:01}",
				"redisson_unlock_latch:{lockbench:1}", "redisson_unlock_latch:{lockbench:1}:XYZ",
				"redisson_lock__channel:{lockbench:1}", "redisson_rwlock:{lockbench:1}",
				"rueidislock:x:lockbench:1", "rueidislock:0:lockbench:1:x", "rueidislock:0:mylockbench:1", "lockbench:resource:{r}:counts",
			},
		},
		{
			// Glob and regexp specials in the prefix stand for themselves.
			prefix: "b.n[1]*:",
			ours: map[string]string{
				"b.n[1]*:4":                                  "lock",
				"redisson_lock_queue:{b.n[1]*:4}":            "fair_queue",
				"{b.n[1]*:4}:" + owner + ":rwlock_timeout:1": "rwlock_timeout",
				"rueidislock:0:b.n[1]*:4":                    "rueidislock",
			},
			others: []string{"bxn[1]*:4", "b.n1:4", "b.n[1]*:4x", "redisson_lock_queue:{b.n1*:4}"},
		},
		{
			// A prefix with a hash tag of its own: Redisson adds none around the name.
			prefix: "{bench}:",
			ours: map[string]string{
				"{bench}:9":                              "lock",
				"{bench}:9:" + owner + ":rwlock_timeout": "rwlock_timeout",
				"redisson_lock_queue:{bench}:9":          "fair_queue",
				"redisson_lock_token:{bench}:9":          "fencing_token",
				"redisson_unlock_latch:{bench}:9:ab12":   "unlock_latch",
				"rueidislock:0:{bench}:9":                "rueidislock",
			},
			others: []string{"{bench}:x", "{{bench}:9}", "redisson_lock_queue:{{bench}:9}", "x{bench}:9"},
		},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			k := keyspace.New(tc.prefix)
			for key, want := range tc.ours {
				s, ok := k.Match(key)
				if !ok || s.Name != want {
					t.Errorf("Match(%q) = %q, %v; want %q", key, s.Name, ok, want)
					continue
				}
				// The shape's glob finds it, and so does one of the globs scanned with: SCAN
				// MATCH is the prefilter of every key.
				if m, err := path.Match(s.Glob, key); err != nil || !m {
					t.Errorf("%q is %s, but its glob %q does not match it (%v)", key, want, s.Glob, err)
				}
				if !slices.ContainsFunc(k.Globs(), func(g string) bool { m, _ := path.Match(g, key); return m }) {
					t.Errorf("%q is %s, but no glob of %q finds it", key, want, k.Globs())
				}
			}
			for _, key := range tc.others {
				if s, ok := k.Match(key); ok {
					t.Errorf("Match(%q) = %s; want no shape: not lockbench's", key, s.Name)
				}
			}
		})
	}
}

// TestGlobsAreGrantedByACL keeps keyspace and acl in step: every shape's glob is among the key
// patterns the user of 'lockbench acl' is granted, so the cleanup never deletes a key the user
// may not touch. (SCAN itself is not checked against key patterns: Globs may be coarser.)
func TestGlobsAreGrantedByACL(t *testing.T) {
	for _, prefix := range []string{"lockbench:", "b[1]:", "{bench}:", "x*y"} {
		k := keyspace.New(prefix)
		granted := acl.KeyPatterns(prefix)
		for _, s := range k.Shapes() {
			if !slices.Contains(granted, s.Glob) {
				t.Errorf("prefix %q: %s's glob %q is not among acl.KeyPatterns %v", prefix, s.Name, s.Glob, granted)
			}
		}
		if want := 4 - strings.Count(prefix, "{"); len(k.Globs()) != want {
			t.Errorf("prefix %q: globs %q, want %d", prefix, k.Globs(), want)
		}
		if len(k.Shapes()) != 7 || k.Prefix() != prefix || k.PrefixGlob() != acl.GlobEscape(prefix)+"*" {
			t.Errorf("prefix %q: %d shapes, prefix %q, prefix glob %q", prefix, len(k.Shapes()), k.Prefix(), k.PrefixGlob())
		}
	}
}

func TestPatternsNameTheShapes(t *testing.T) {
	var got []string
	for _, s := range keyspace.New("lb:").Shapes() {
		got = append(got, s.Pattern)
	}
	want := []string{"lb:<n>", "{lb:<n>}:<owner>:rwlock_timeout[:<i>]", "redisson_lock_queue:{lb:<n>}", "redisson_lock_timeout:{lb:<n>}",
		"redisson_lock_token:{lb:<n>}", "redisson_unlock_latch:{lb:<n>}:<id>", "rueidislock:<k>:lb:<n>"}
	if !slices.Equal(got, want) {
		t.Errorf("patterns %q\nwant     %q", got, want)
	}
}

func TestCheckPrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		ok     bool
	}{{"a", false}, {"ab", false}, {"é:", false}, {"abc", true}, {"lockbench:", true}} {
		err := keyspace.CheckPrefix(tc.prefix)
		if (err == nil) != tc.ok {
			t.Errorf("CheckPrefix(%q) = %v, want ok %v", tc.prefix, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "3 characters") {
			t.Errorf("CheckPrefix(%q) = %v: want the minimum named", tc.prefix, err)
		}
	}
}

// TestFindAndForeign runs the scans against a server: Find returns lockbench's keys only, each
// once; Foreign the names starting with the prefix that are not lockbench's, at most max.
func TestFindAndForeign(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: srv.Addrs(), ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	ours := []string{"lb:1", "lb:2", "redisson_lock_queue:{lb:1}", "rueidislock:0:lb:2", "{lb:1}:o:1:rwlock_timeout:1"}
	theirs := []string{"lb:cfg", "lb:1x", "lb:01", "app:lb:1", "x{lb:1}", "redisson_lock_queue:{lb:x}", "lb"}
	data := []string{"lockbench:collect:{r}:list", "lockbench:referee:{r}:violations"} // lockbench's, no lock's
	theirs = append(theirs, data...)
	for _, k := range append(slices.Clone(ours), theirs...) {
		if err := c.Do(ctx, c.B().Set().Key(k).Value("v").Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	k := keyspace.New("lb:")
	found, err := k.Find(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range found {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	want := slices.Sorted(slices.Values(ours))
	if !slices.Equal(names, want) {
		t.Errorf("Find = %v, want %v", names, want)
	}
	foreign, err := k.Foreign(ctx, c, 10, 1000)
	slices.Sort(foreign)
	if err != nil || !slices.Equal(foreign, []string{"lb:01", "lb:1x", "lb:cfg"}) {
		t.Errorf("Foreign = %v, %v; want lb:01 lb:1x lb:cfg", foreign, err)
	}
	if few, err := k.Foreign(ctx, c, 2, 1000); err != nil || len(few) != 2 {
		t.Errorf("Foreign(max 2) = %v, %v", few, err)
	}
	// A collect store's results and a referee's marks are lockbench's: they make the default
	// prefix no less specific, and are none of its locks, so the cleanup keeps them.
	lb := keyspace.New("lockbench:")
	if foreign, err := lb.Foreign(ctx, c, 10, 1000); err != nil || len(foreign) != 0 {
		t.Errorf("Foreign of lockbench: = %v, %v; want none: %v are lockbench's data", foreign, err, data)
	}
	if found, err := lb.Find(ctx, c); err != nil || len(found) != 0 {
		t.Errorf("Find of lockbench: = %v, %v; want no lock's key", found, err)
	}
}
