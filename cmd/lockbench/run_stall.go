package main

import (
	"time"

	"github.com/spf13/pflag"
)

// Stall detection (issue 36) is bench's (Spec.StallThreshold); these are its flags, which
// Spec.Validate checks.

// defaultStallThreshold is --stall-threshold's default: far above any healthy PING (well under a
// millisecond on a LAN), above the second for which a heavily loaded machine was seen to
// deschedule a process (a CI runner shared by several test binaries), and the drivers' reply
// timeout (drivers.ReplyTimeout): a longer stall also fails calls as timeouts, a shorter one
// fails none and is seen only here.
const defaultStallThreshold = 2 * time.Second

// stallFlags are --stall-threshold and --allow-stalls (run and sweep).
type stallFlags struct {
	threshold time.Duration
	allow     bool
}

func (s *stallFlags) add(fs *pflag.FlagSet) {
	fs.DurationVar(&s.threshold, "stall-threshold", defaultStallThreshold, "a master that leaves lockbench's PING unanswered this long during a measured phase stalled: the run is marked and fails (exit 1); 0 turns the check off")
	fs.BoolVar(&s.allow, "allow-stalls", false, "report stalls (--stall-threshold) without failing the run, for scenarios that stall the server on purpose by other means than --fault")
}
