package extdriver

import (
	"strings"
	"sync/atomic"
)

// NullName is the adapter name of the null row: the null adapter, the protocol over an
// in-memory lock, whose latency is what the pipe costs an external driver (a run's summary sets
// every other exec driver's latency against it).
const NullName = "null"

// NullSpec, "exec:null" with no command, runs the null adapter built into the program, when the
// program has one (SetNullCommand): lockbench does, as "lockbench null-adapter".
const NullSpec = SchemePrefix + ":" + NullName

// nullCommand is the command NullSpec runs; nil when the program has no null adapter built in.
var nullCommand atomic.Pointer[[]string]

// SetNullCommand makes NullSpec run argv: a program that can serve the null adapter itself
// (lockbench's main, through adapter.ServeBuiltin) gives its own path and the argument that
// makes it one. Safe for concurrent use; nil unsets it.
func SetNullCommand(argv []string) {
	if len(argv) == 0 {
		nullCommand.Store(nil)
		return
	}
	argv = append([]string(nil), argv...)
	nullCommand.Store(&argv)
}

// NullCommand is the command NullSpec runs, nil when this program has no null adapter built in.
func NullCommand() []string {
	if p := nullCommand.Load(); p != nil {
		return append([]string(nil), (*p)...)
	}
	return nil
}

// IsNull reports whether spec is the null row: exec:null, with or without a command.
func IsNull(spec string) bool {
	return spec == NullSpec || strings.HasPrefix(spec, NullSpec+"=")
}

// WithNull returns specs with the null row (NullSpec) added when they have an exec driver but
// no null row, and this program has the null adapter built in; else specs as they are. lockbench
// run calls it so that an external driver's latency always has the pipe's beside it.
func WithNull(specs []string) []string {
	exec, null := false, false
	for _, s := range specs {
		exec = exec || strings.HasPrefix(s, SchemePrefix+":")
		null = null || IsNull(s)
	}
	if !exec || null || NullCommand() == nil {
		return specs
	}
	return append(specs[:len(specs):len(specs)], NullSpec)
}
