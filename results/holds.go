package results

// HoldChecks is what the reentrancy and longhold workloads checked in Redis about the holds
// they had, warm-up included like Run.Violations. Lost leases and hold-count mismatches are
// safety events: they are counted in Run.Violations too. It is a plain value.
type HoldChecks struct {
	// Checks is how many times a worker read its hold count from Redis.
	Checks int64 `json:"checks"`
	// CountMismatches is the reentrancy checks that found a hold count other than the nesting
	// level the worker was at (a lost lease reads 0).
	CountMismatches int64 `json:"count_mismatches"`
	// LeasesLost is the holds found lost while held: the lock was no longer the worker's at
	// the end of its hold (hold count 0 in Redis), or, for a driver that cannot read its hold
	// count, its release was refused as not held.
	LeasesLost int64 `json:"leases_lost"`
	// Renewals is the watchdog renewals the driver sent over the measured phase, for drivers
	// that count them (RenewalsCounted); RenewalsPerAcquisition divides by the acquisitions.
	Renewals               int64   `json:"renewals"`
	RenewalsPerAcquisition float64 `json:"renewals_per_acquisition"`
	RenewalsCounted        bool    `json:"renewals_counted"`
	// Unchecked says why hold counts were not read, when the driver cannot report them; lost
	// leases are then seen only through refused releases.
	Unchecked string `json:"unchecked,omitempty"`
}
