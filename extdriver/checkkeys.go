package extdriver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lockbench/lockbench/keyspace"
)

// checkKeysLimit is how many keys the check's Redis may hold before the check for the keys
// rule to look at them: a larger keyspace (a shared --addr) is not walked, and the rule is
// skipped.
const checkKeysLimit = 100_000

// checkKeysTimeout bounds each SCAN of the keys rule.
const checkKeysTimeout = 30 * time.Second

// keysShown is how many keys a keys failure names.
const keysShown = 3

// keysBefore returns the keys on the check's Redis before the adapter starts, which the keys
// rule does not count as the adapter's; or why the rule is skipped.
func (c *checker) keysBefore(ctx context.Context) (map[string]bool, string) {
	if c.opt.Redis == nil {
		return nil, ""
	}
	before := map[string]bool{}
	ctx, cancel := context.WithTimeout(ctx, checkKeysTimeout)
	defer cancel()
	err := keyspace.Scan(ctx, c.opt.Redis, "*", func(keys []string) (bool, error) {
		for _, k := range keys {
			before[k] = true
		}
		return len(before) <= checkKeysLimit, nil
	})
	switch {
	case err != nil:
		return nil, fmt.Sprintf("cannot list the keys of the check's Redis (SCAN): %v", err)
	case len(before) > checkKeysLimit:
		return nil, fmt.Sprintf("the check's Redis holds more than %d keys already: check on a Redis of its own (no --addr) to check the keys the adapter makes", checkKeysLimit)
	}
	return before, ""
}

// keys: every key the adapter made during the check (one not there before) is one of the
// check's lock names or a key lockbench's shapes derive from it (package keyspace), or one its
// hello declared (Hello.Keys) for such a name. lockbench's own data (a referee on the same
// Redis) is no key of the adapter's.
func (c *checker) keys(ctx context.Context, before map[string]bool, declared []keyspace.Declared) *Failure {
	c.mu.Lock()
	var spaces []*keyspace.Keyspace
	for g := range c.groups {
		spaces = append(spaces, keyspace.New(c.prefix+g+":", declared...))
	}
	c.mu.Unlock()
	owned := func(key string) bool {
		for _, ks := range spaces {
			if ks.Owns(key) {
				return true
			}
		}
		return keyspace.IsData(key)
	}
	var stray []string
	seen := map[string]bool{} // SCAN may return a key twice
	ctx, cancel := context.WithTimeout(ctx, checkKeysTimeout)
	defer cancel()
	err := keyspace.Scan(ctx, c.opt.Redis, "*", func(keys []string) (bool, error) {
		for _, k := range keys {
			if !before[k] && !owned(k) && !seen[k] {
				seen[k] = true
				if len(stray) < keysShown {
					stray = append(stray, k)
				}
			}
		}
		return true, nil
	})
	op := "SCAN the adapter's Redis after the rules"
	if err != nil {
		return &Failure{Op: op, Detail: fmt.Sprintf("cannot list its keys: %v", err)}
	}
	n := len(seen)
	if n == 0 {
		return nil
	}
	quoted := make([]string, len(stray))
	for i, k := range stray {
		quoted[i] = fmt.Sprintf("%q", k)
	}
	more := ""
	if n > len(stray) {
		more = fmt.Sprintf(" and %d more", n-len(stray))
	}
	hello := "the hello declares no keys"
	if len(declared) > 0 {
		var ps []string
		for _, d := range declared {
			ps = append(ps, d.Pattern)
		}
		hello = "the hello declares " + strings.Join(ps, ", ")
	}
	return &Failure{Op: op, Detail: fmt.Sprintf("the adapter made %d keys that are none of the check's lock names (%s<group>:<n>), lockbench's shapes of them, or the hello's keys (%s): %s%s; "+
		"declare the keys the library makes in the hello's keys, e.g. \"{name}:tokens\" (docs/external-drivers.md)", n, c.prefix, hello, strings.Join(quoted, ", "), more)}
}
