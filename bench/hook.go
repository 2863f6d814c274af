package bench

// Remote is one run made by generator processes (Options.Remote).
type Remote struct {
	Driver string
	Round  int
	// Faults are the run's faults: the hook schedules them (FaultRun.Scheduled,
	// FaultRun.RunSchedule) and the session records what they did.
	Faults *FaultRun
	// Failed is set by the hook when the run it returns fails although it is recorded (a
	// process lost, a generator that failed).
	Failed bool
}
