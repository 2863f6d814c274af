package main

// The commands that take the run flags (each adds or hides some of them).
const (
	cmdRun    = "run"
	cmdWorker = "worker"
	cmdSweep  = "sweep"
)
