package rediscpu

import (
	"fmt"
	"io"
	"time"
)

// Experiment is one list of commands whose cost is measured, per unit of work.
type Experiment struct {
	// Name says what is measured, for the table.
	Name string
	// Unit names what Units counts ("command", "call", "acquisition", "operation").
	Unit string
	// Units is how many units Body performs.
	Units int
	// Depth is how many commands go out per pipeline (one write, then their replies); at least 1.
	Depth int
	// Setup runs before Body and Teardown after it, unmeasured; Body is measured. After
	// Teardown the keyspace is as before Setup, so the experiment can run again.
	Setup, Body, Teardown [][]string
	// Check, if set, vets each reply of Body (an error reply fails the run before it), so that an
	// experiment cannot measure a path it did not mean to (a lock attempt that failed, say).
	Check func(cmd []string, reply any) error
}

// Result is an experiment's measured cost.
type Result struct {
	Experiment
	Cost
}

// PerUnit is the instructions (ModeCallgrind) per unit of work.
func (r Result) PerUnit() float64 { return r.Instructions / float64(r.Units) }

// CPUPerUnit is the CPU time (ModeCPU) per unit of work.
func (r Result) CPUPerUnit() time.Duration { return r.CPU / time.Duration(r.Units) }

// Run runs e once unmeasured (so that the server's tables, allocator and script cache are warm),
// then again with Body measured. An error reply anywhere fails the run: an experiment measures
// only what succeeds.
func (s *Server) Run(c *Conn, e Experiment) (Result, error) {
	if e.Depth < 1 || e.Units < 1 {
		return Result{}, fmt.Errorf("rediscpu: %s: depth %d and units %d must be positive", e.Name, e.Depth, e.Units)
	}
	for i, part := range [][][]string{e.Setup, e.Body, e.Teardown} {
		check := e.Check
		if i != 1 {
			check = nil
		}
		if err := send(c, part, e.Depth, check); err != nil {
			return Result{}, fmt.Errorf("rediscpu: %s (warm-up): %w", e.Name, err)
		}
	}
	if err := send(c, e.Setup, e.Depth, nil); err != nil {
		return Result{}, fmt.Errorf("rediscpu: %s: setup: %w", e.Name, err)
	}
	cost, err := s.Measure(func() error { return send(c, e.Body, e.Depth, e.Check) })
	if err != nil {
		return Result{}, fmt.Errorf("rediscpu: %s: %w", e.Name, err)
	}
	if err := send(c, e.Teardown, e.Depth, nil); err != nil {
		return Result{}, fmt.Errorf("rediscpu: %s: teardown: %w", e.Name, err)
	}
	return Result{Experiment: e, Cost: cost}, nil
}

// send sends cmds in pipelines of depth commands and checks every reply: no error reply, and
// check's verdict when check is set.
func send(c *Conn, cmds [][]string, depth int, check func([]string, any) error) error {
	for len(cmds) > 0 {
		n := min(depth, len(cmds))
		replies, err := c.Pipeline(cmds[:n])
		if err != nil {
			return err
		}
		for i, r := range replies {
			err := replyError(r)
			if err == nil && check != nil {
				err = check(cmds[i], r)
			}
			if err != nil {
				return fmt.Errorf("%.200q: %w", cmds[i], err)
			}
		}
		cmds = cmds[n:]
	}
	return nil
}

// WriteTable writes results as a Markdown table: instructions per unit under callgrind, CPU time
// per unit natively.
func WriteTable(w io.Writer, mode string, rs []Result) {
	if mode == ModeCallgrind {
		fmt.Fprintln(w, "| experiment | depth | unit | instructions per unit |")
		fmt.Fprintln(w, "|---|--:|---|--:|")
		for _, r := range rs {
			fmt.Fprintf(w, "| %s | %d | %s | %.0f |\n", r.Name, r.Depth, r.Unit, r.PerUnit())
		}
		return
	}
	fmt.Fprintln(w, "| experiment | depth | unit | CPU per unit |")
	fmt.Fprintln(w, "|---|--:|---|--:|")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %d | %s | %v |\n", r.Name, r.Depth, r.Unit, r.CPUPerUnit())
	}
}
