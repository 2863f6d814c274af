package main

import (
	"time"

	"github.com/lockbench/lockbench/bench"
	"github.com/spf13/pflag"
)

// Stall detection (issue 36) is bench's (Spec.StallThreshold); these are its flags, which
// Spec.Validate checks.

// stallFlags are --stall-threshold and --allow-stalls (run and sweep).
type stallFlags struct {
	threshold time.Duration
	allow     bool
}

func (s *stallFlags) add(fs *pflag.FlagSet) {
	fs.DurationVar(&s.threshold, "stall-threshold", bench.DefaultStallThreshold, "a master that leaves lockbench's PING unanswered this long during a measured phase stalled: the run is marked and fails (exit 1); 0 turns the check off")
	fs.BoolVar(&s.allow, "allow-stalls", false, "report stalls (--stall-threshold) without failing the run, for scenarios that stall the server on purpose by other means than --fault")
}
