package main

import (
	"context"
	"fmt"
	"github.com/lockbench/lockbench/target"
	"strings"

	"github.com/lockbench/lockbench/keyspace"
	"github.com/lockbench/lockbench/results"
	"github.com/spf13/pflag"
)

// keyspaceFlags is --clean-existing (run and sweep): whether keys of lockbench's shapes found on
// an attached deployment before the first run may be deleted.
type keyspaceFlags struct {
	cleanExisting bool
}

// add registers the group's flags for cmd: run and sweep clean an attached deployment; a
// worker (lockbench worker, the processes of --procs) never does.
func (g *keyspaceFlags) add(fs *pflag.FlagSet, cmd string) {
	if cmd != cmdRun && cmd != cmdSweep {
		return
	}
	fs.BoolVar(&g.cleanExisting, "clean-existing", false, "with --addr: delete the keys of lockbench's own shapes for --key-prefix found before the first run "+
		"(another run's, or a crashed one's); without it lockbench names them, leaves them alone and does not start (exit 2)")
}

const (
	// keysShown is how many keys a refusal names.
	keysShown = 5
	// foreignSample is how many names starting with --key-prefix the preflight looks at, per
	// master, for keys that are not lockbench's.
	foreignSample = 10000
)

// checkAttachedKeyspace runs before the first run on a deployment lockbench attached to, so that
// its cleanup can never delete someone else's keys: a --key-prefix shorter than
// keyspace.MinPrefixLen, or one that begins keys not of lockbench's shapes (a sample of each
// master), is refused; keys of lockbench's shapes already there (another run's, a crashed one's)
// are named and left alone, and refused, unless --clean-existing. It sets file.Cleanup, which
// the cleanups fill. It returns what to say and the exit code, or "" to go on. On a deployment
// lockbench started, which it flushes, it does nothing.
func checkAttachedKeyspace(ctx context.Context, f *runFlags, tgt *runTarget, file *results.File, ui *progressUI) (string, int) {
	if !tgt.Attached() {
		return "", exitOK
	}
	prefix := f.cfg.KeyPrefix
	if err := keyspace.CheckPrefix(prefix); err != nil {
		return err.Error(), exitUsage
	}
	ks := keyspace.New(prefix)
	var existing []string
	var nExisting int64
	for _, n := range tgt.Masters() {
		sctx, cancel := context.WithTimeout(ctx, target.CleanTimeout)
		foreign, err := ks.Foreign(sctx, n.Client, keysShown, foreignSample)
		if err == nil && len(foreign) > 0 {
			cancel()
			return fmt.Sprintf("--key-prefix %q is too generic for %s: it begins keys that are not lockbench's (%s), and lockbench deletes the keys "+
				"of its own shapes under it (lock names %s…); nothing was touched. Pick a prefix that begins none of yours, e.g. --key-prefix lockbench:bench:",
				prefix, n.Addr, strings.Join(foreign, ", "), prefix+"0, "+prefix+"1, "), exitUsage
		}
		var keys []keyspace.Key
		if err == nil {
			keys, err = ks.Find(sctx, n.Client)
		}
		cancel()
		if err != nil {
			return fmt.Sprintf("cannot look for lockbench's keys on %s (SCAN): %v", n.Addr, tgt.Conn().Redact(err.Error())), exitFailure
		}
		nExisting += int64(len(keys))
		for _, k := range keys {
			if len(existing) < keysShown {
				existing = append(existing, k.Name)
			}
		}
	}
	file.Cleanup = &results.Cleanup{Prefix: prefix, Existing: nExisting}
	if nExisting == 0 {
		return "", exitOK
	}
	more := ""
	if nExisting > int64(len(existing)) {
		more = fmt.Sprintf(" and %d more", nExisting-int64(len(existing)))
	}
	if !f.keyspace.cleanExisting {
		return fmt.Sprintf("%d keys of lockbench's shapes for --key-prefix %q are already on the deployment (another lockbench run's, or a crashed one's): %s%s; "+
			"they were left alone. Delete them with --clean-existing, or use another --key-prefix", nExisting, prefix, strings.Join(existing, ", "), more), exitUsage
	}
	ui.line("--clean-existing: deleting %d keys of lockbench's shapes for --key-prefix %q found before the first run: %s%s", nExisting, prefix, strings.Join(existing, ", "), more)
	return "", exitOK
}
