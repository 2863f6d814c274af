package results

// MaxAuditKeys bounds Audit.Keys: a run that strands a million keys lists the first few, and
// counts them all.
const MaxAuditKeys = 20

// Audit is the post-run scan of the deployment for the keys lockbench left behind (see package
// audit). Leftovers fail the run like errors: lockbench run adds them to Errors under the kind
// "leftover_keys". It is a plain value.
type Audit struct {
	// Masters is how many masters were scanned; Pattern the SCAN MATCH patterns used, space
	// separated: "*" on a deployment lockbench started, the globs of lockbench's key shapes on
	// one it attached to (where each key found must also be of a shape: package keyspace).
	Masters int    `json:"masters"`
	Pattern string `json:"pattern"`
	// Leftovers is the keys found that should not outlive a run: lock keys, fair-lock queue
	// and timeout keys, read-write lock timeout keys, anything else matching the pattern.
	Leftovers int64 `json:"leftovers"`
	// FencingCounters is the fencing token counters found (redisson_lock_token:{name}): kept
	// after a run on purpose, without TTL, and not leftovers.
	FencingCounters int64 `json:"fencing_counters"`
	// UnlockLatches is Redisson's unlock latch keys found with a TTL
	// (redisson_unlock_latch:{name}:<request id>): the redisson driver's 3.52 profile leaves
	// them to expire, as Redisson 3.52 does, and they are not leftovers. A latch without a TTL
	// is one.
	UnlockLatches int64 `json:"unlock_latches,omitempty"`
	// Keys lists up to MaxAuditKeys leftovers.
	Keys []LeftoverKey `json:"keys,omitempty"`
	// Error says why the scan did not finish; its counts are then a lower bound.
	Error string `json:"error,omitempty"`
}

// LeftoverKey is one key a run left behind.
type LeftoverKey struct {
	Node string `json:"node"`
	Key  string `json:"key"`
	Type string `json:"type"`
	// TTLMS is the key's PTTL in milliseconds; -1 when it has no TTL (it would stay forever).
	TTLMS int64 `json:"ttl_ms"`
}
