package keyspace

import (
	"context"

	"github.com/redis/rueidis"
)

// ScanCount is SCAN's COUNT hint while looking for lockbench's keys.
const ScanCount = 1000

// Scan runs SCAN MATCH glob over the keys of the node c is connected to (in a cluster, SCAN
// lists the keys of the node it is sent to only) and hands each batch of names found to fn,
// until the cursor comes back to 0, fn returns false or an error, or ctx ends. A key may be
// handed over twice (SCAN's guarantee is "at least once" while the keyspace changes).
func Scan(ctx context.Context, c rueidis.Client, glob string, fn func(keys []string) (more bool, err error)) error {
	cursor := uint64(0)
	for {
		e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match(glob).Count(ScanCount).Build()).AsScanEntry()
		if err != nil {
			return err
		}
		if len(e.Elements) > 0 {
			more, err := fn(e.Elements)
			if err != nil || !more {
				return err
			}
		}
		if e.Cursor == 0 {
			return nil
		}
		cursor = e.Cursor
	}
}

// Key is one of lockbench's keys found on a node.
type Key struct {
	Name  string
	Shape Shape
}

// Find scans the node c is connected to with every glob of k and returns the keys that are of
// k's shapes, each once, in the order found.
func (k *Keyspace) Find(ctx context.Context, c rueidis.Client) ([]Key, error) {
	var out []Key
	seen := map[string]bool{}
	for _, g := range k.Globs() {
		err := Scan(ctx, c, g, func(keys []string) (bool, error) {
			for _, name := range keys {
				if s, ok := k.Match(name); ok && !seen[name] {
					seen[name] = true
					out = append(out, Key{Name: name, Shape: s})
				}
			}
			return true, nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// Foreign scans the keys of the node c is connected to that start with k's prefix, and returns
// up to max of them that are not lockbench's (IsData aside): a prefix that begins someone else's
// names too.
// It stops at max, or after looking at limit names starting with the prefix (a sample: a large
// keyspace is not walked to its end for this).
func (k *Keyspace) Foreign(ctx context.Context, c rueidis.Client, max, limit int) ([]string, error) {
	var out []string
	looked := 0
	err := Scan(ctx, c, k.PrefixGlob(), func(keys []string) (bool, error) {
		for _, name := range keys {
			looked++
			if !k.Owns(name) && !IsData(name) && len(out) < max {
				out = append(out, name)
			}
		}
		return len(out) < max && looked < limit, nil
	})
	return out, err
}
