package adapter

// workers runs the operations that call a library which waits (every Library but an Immediate
// one) on goroutines kept for the next operation, where Serve once started a goroutine per
// operation.
//
// Why: a goroutine starts on a small stack, and a lock library's call path (redsync over
// go-redis: the pool, the command, the reply's reader) needs more, so every new goroutine grew
// its stack, copying it, the first time it ran the call. Measured with the redsync adapter
// placed on lockbench's CPU (`perf record -a -g`, a closed loop of 64 workers): runtime.morestack
// took 12.9% of all samples, a fifth of the adapter's CPU, about 13 µs per acquisition. In
// process, lockbench's workers are long-lived goroutines whose stacks grew once. A kept
// goroutine keeps its grown stack, so the adapter pays that once per goroutine, not per
// operation.
//
// A goroutine is kept only while Serve runs; their number is the most operations that were in
// flight at once. Operations run on them as they did on their own goroutines: two of one owner
// are never queued behind each other, so an adapter's concurrency is unchanged.
type workers struct {
	// idle hands an operation to a kept goroutine that is waiting for one: an unbuffered send
	// succeeds only when one is.
	idle chan func()
}

func newWorkers() *workers { return &workers{idle: make(chan func())} }

// run runs f on a kept goroutine that is idle, or on a new one, which is kept after f.
func (w *workers) run(f func()) {
	select {
	case w.idle <- f:
	default:
		go w.keep(f)
	}
}

// keep runs f and then every operation handed to it, until stop.
func (w *workers) keep(f func()) {
	for f != nil {
		f()
		f = <-w.idle // nil once stop closed it
	}
}

// stop ends the kept goroutines once they are idle. Call it once, after the last run.
func (w *workers) stop() { close(w.idle) }
