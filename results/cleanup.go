package results

// Cleanup is what lockbench deleted of its own keys on a deployment it attached to (--addr),
// before, between and after the runs of one file. Only keys of lockbench's exact shapes for the
// prefix are deleted (package keyspace), never a key that merely contains the prefix; on a
// deployment lockbench started, which it flushes, there is no Cleanup. It is a plain value.
type Cleanup struct {
	// Prefix is the --key-prefix the keys were found by.
	Prefix string `json:"prefix"`
	// Existing is how many keys of lockbench's shapes were there before the first run (another
	// run's, or a crashed one's): lockbench refuses to start over them unless --clean-existing
	// says to delete them, and they are among Removed then.
	Existing int64 `json:"existing,omitempty"`
	// Removed is every key deleted; ByPattern splits it by the key's shape, written as
	// "redisson_lock_queue:{lockbench:<n>}" (see keyspace.Shape.Pattern).
	Removed   int64            `json:"removed"`
	ByPattern map[string]int64 `json:"by_pattern,omitempty"`
	// Error says why a cleanup did not finish (the last such); keys may then remain.
	Error string `json:"error,omitempty"`
	// Declared are the key patterns the run's external adapters declared in their hellos
	// ("{name}:tokens"; see keyspace.ParseDeclared): their keys for the prefix's lock names are
	// found, refused and deleted with lockbench's own.
	Declared []string `json:"declared,omitempty"`
}

// Add records that n keys of the shape pattern were deleted.
func (c *Cleanup) Add(pattern string, n int64) {
	if n == 0 {
		return
	}
	if c.ByPattern == nil {
		c.ByPattern = map[string]int64{}
	}
	c.ByPattern[pattern] += n
	c.Removed += n
}
