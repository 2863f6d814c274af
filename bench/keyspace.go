package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/keyspace"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
)

const (
	// keysShown is how many keys a refusal names.
	keysShown = 5
	// foreignSample is how many names starting with --key-prefix the preflight looks at, per
	// master, for keys that are not lockbench's.
	foreignSample = 10000
)

// ErrForeignKeys and ErrKeysExist are wrapped, with ErrBadSpec, by CheckKeyspace's error: the
// prefix begins keys that are not lockbench's, or keys of lockbench's shapes are already there.
// Nothing was touched.
var (
	ErrForeignKeys = errors.New("bench: the key prefix begins keys that are not lockbench's")
	ErrKeysExist   = errors.New("bench: lockbench's keys are already on the deployment")
)

// CheckKeyspace runs before the first run on a deployment t attached to, so that its cleanup
// can never delete someone else's keys: a prefix shorter than keyspace.MinPrefixLen, or one that
// begins keys not of lockbench's shapes (a sample of each master), is refused; keys of
// lockbench's shapes already there (another run's, a crashed one's) are named and left alone,
// and refused, unless cleanExisting (they are then deleted by the first run's cleaning). It
// returns the record the cleanups fill (results.File.Cleanup). Refusals wrap ErrBadSpec; any
// other error is a failure to look (SCAN). On a deployment lockbench started, which it
// flushes, it does nothing and returns nil. declared are the key shapes the run's external
// adapters declared (extdriver.DeclaredKeys): their keys count as lockbench's, and the record
// keeps them (results.Cleanup.Declared) for the cleanups.
func CheckKeyspace(ctx context.Context, tgt *target.Target, prefix string, cleanExisting bool, rep Reporter, declared ...keyspace.Declared) (*results.Cleanup, error) {
	if !tgt.Attached() {
		return nil, nil
	}
	if err := keyspace.CheckPrefix(prefix); err != nil {
		return nil, &badSpec{msg: err.Error(), cause: err}
	}
	ks := keyspace.New(prefix, declared...)
	var existing []string
	var nExisting int64
	for _, n := range tgt.Masters() {
		sctx, cancel := context.WithTimeout(ctx, target.CleanTimeout)
		foreign, err := ks.Foreign(sctx, n.Client, keysShown, foreignSample)
		if err == nil && len(foreign) > 0 {
			cancel()
			return nil, &badSpec{cause: ErrForeignKeys, msg: fmt.Sprintf("--key-prefix %q is too generic for %s: it begins keys that are not lockbench's (%s), and lockbench deletes the keys "+
				"of its own shapes under it (lock names %s…); nothing was touched. Pick a prefix that begins none of yours, e.g. --key-prefix lockbench:bench:",
				prefix, n.Addr, strings.Join(foreign, ", "), prefix+"0, "+prefix+"1, ")}
		}
		var keys []keyspace.Key
		if err == nil {
			keys, err = ks.Find(sctx, n.Client)
		}
		cancel()
		if err != nil {
			return nil, fmt.Errorf("cannot look for lockbench's keys on %s (SCAN): %v", n.Addr, tgt.Conn().Redact(err.Error()))
		}
		nExisting += int64(len(keys))
		for _, k := range keys {
			if len(existing) < keysShown {
				existing = append(existing, k.Name)
			}
		}
	}
	cleanup := &results.Cleanup{Prefix: prefix, Existing: nExisting}
	for _, d := range declared {
		cleanup.Declared = append(cleanup.Declared, d.Pattern)
	}
	if nExisting == 0 {
		return cleanup, nil
	}
	more := ""
	if nExisting > int64(len(existing)) {
		more = fmt.Sprintf(" and %d more", nExisting-int64(len(existing)))
	}
	if !cleanExisting {
		return nil, &badSpec{cause: ErrKeysExist, msg: fmt.Sprintf("%d keys of lockbench's shapes for --key-prefix %q are already on the deployment (another lockbench run's, or a crashed one's): %s%s; "+
			"they were left alone. Delete them with --clean-existing, or use another --key-prefix", nExisting, prefix, strings.Join(existing, ", "), more)}
	}
	rep.Line("--clean-existing: deleting %d keys of lockbench's shapes for --key-prefix %q found before the first run: %s%s", nExisting, prefix, strings.Join(existing, ", "), more)
	return cleanup, nil
}
