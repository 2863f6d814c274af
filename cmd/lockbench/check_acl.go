package main

import (
	"context"
	"fmt"
	"io"

	"github.com/lockbench/lockbench/bench"
)

// prefixAllowed runs bench.KeyAccess for lockbench command cmd (run, sweep) on a deployment it
// attached to, before anything is measured: it prints a refusal to stderr and reports false, or
// prints the warnings as progress lines and reports true. A topology lockbench started grants
// everything.
func (t *runTarget) prefixAllowed(ctx context.Context, cmd, prefix string, ui *progressUI, stderr io.Writer) bool {
	if !t.Attached() {
		return true
	}
	refuse, warn := t.checkPrefixACL(ctx, prefix)
	if refuse != "" {
		fmt.Fprintf(stderr, "lockbench %s: %s\n", cmd, refuse)
		return false
	}
	for _, w := range warn {
		ui.line("warning: %s", w)
	}
	return true
}

// checkPrefixACL is bench.KeyAccess as lockbench check shows it: the refusal's message, or "",
// and the warnings.
func (t *runTarget) checkPrefixACL(ctx context.Context, prefix string) (refuse string, warn []string) {
	warn, err := bench.KeyAccess(ctx, t.Target, prefix)
	if err != nil {
		return err.Error(), nil
	}
	return "", warn
}
