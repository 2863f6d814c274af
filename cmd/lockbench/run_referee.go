package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/referee"
	"github.com/lockbench/lockbench/results"
	"github.com/spf13/pflag"
)

// refereeNative is --referee's value for a referee lockbench starts itself.
const refereeNative = "native"

// refereeFlags are --referee and --referee-ca-file (run and worker): the safety referee every
// holder marks its critical section on.
type refereeFlags struct {
	addr   string
	caFile string
}

// add registers the group's flags for cmd (run or worker).
func (g *refereeFlags) add(fs *pflag.FlagSet, cmd string) {
	if cmd == cmdRun {
		fs.StringVar(&g.addr, "referee", "", "safety referee: a Redis that is not the one under test (host:port, redis://, rediss://; password in the URL or "+referee.EnvPassword+"), or 'native' for one lockbench starts; every holder, in every process, marks its critical section there, and a second holder is a violation named with both (see docs/procs.md)")
	} else {
		fs.StringVar(&g.addr, "referee", "", "safety referee every holder marks its critical section on (what lockbench run --referee gives its processes); needs --run")
	}
	fs.StringVar(&g.caFile, "referee-ca-file", "", "with --referee rediss://: the CA that signed the referee's certificate")
}

// check returns what is wrong with the group's flags, or "".
func (g *refereeFlags) check(f *runFlags, cmd string) string {
	switch {
	case g.addr == "" && g.caFile != "":
		return "--referee-ca-file needs --referee"
	case g.addr == "":
		return ""
	case g.addr == refereeNative && cmd != cmdRun:
		return "--referee native: a worker uses the run's referee; give its address"
	case cmd == cmdWorker && f.collect.runID == "":
		return "--referee needs --run ID: every process of the run marks its holders under the run's id"
	case g.addr == refereeNative:
		return ""
	}
	if _, err := referee.Settings(g.options("", "")); err != nil {
		return "--referee: " + err.Error()
	}
	return ""
}

func (g *refereeFlags) options(runID, process string) referee.Options {
	return referee.Options{Addr: g.addr, CAFile: g.caFile, RunID: runID, Process: process}
}

// refereeSession is a run's referee: where it is (started here for 'native'), checked apart from
// the deployment under test.
type refereeSession struct {
	flags  refereeFlags // addr resolved: a native referee's address
	native *compose.Single
	// resource is the protected resource kept on the referee (--resource, run_resource.go),
	// "" for none.
	resource string
}

// errRefereeInput marks a referee that is bad input (exit 2): under test, a bad address, refused
// credentials.
var errRefereeInput = errors.New("referee")

// startReferee starts the native referee if asked, connects, and refuses a referee that is a node
// of tgt, before anything is measured.
func startReferee(ctx context.Context, f *runFlags, tgt *runTarget, ui *progressUI) (*refereeSession, error) {
	s := &refereeSession{flags: f.referee, resource: f.resource.kind}
	if f.referee.addr == refereeNative {
		single, err := compose.StartSingle(ctx, compose.NativeOptions{Host: f.gens.nativeHost()}) // run_generators.go
		if err != nil {
			return nil, fmt.Errorf("starting the native referee: %w", err)
		}
		s.native, s.flags.addr = single, single.Addr()
		if f.resource.autoReferee {
			ui.line("referee: redis-server at %s (native, started for --resource, which is kept on it)", single.Addr())
		} else {
			ui.line("referee: redis-server at %s (native)", single.Addr())
		}
	}
	if err := tgt.checkApart(ctx, s, process(0)); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// checkApart refuses a referee that is a node of the deployment under test.
func (t *runTarget) checkApart(ctx context.Context, s *refereeSession, proc string) error {
	ref, err := referee.Open(ctx, s.flags.options("check", proc))
	if err != nil {
		if errors.Is(err, referee.ErrBadInput) || conn.Refused(err) {
			return fmt.Errorf("%w: %w", errRefereeInput, err)
		}
		return err
	}
	defer ref.Close()
	var nodes []referee.Node
	for _, n := range t.Nodes() {
		nodes = append(nodes, referee.Node{Addr: n.Addr, Client: n.Client})
	}
	if err := ref.CheckApart(ctx, nodes); err != nil {
		if errors.Is(err, referee.ErrUnderTest) {
			return fmt.Errorf("%w: %w: faults and load meant for it would reach the referee; give a separate Redis, or --referee native", errRefereeInput, err)
		}
		return err
	}
	return nil
}

// open connects one process's referee for run runID.
func (s *refereeSession) open(ctx context.Context, runID, proc string) (*referee.Referee, error) {
	return referee.Open(ctx, s.flags.options(runID, proc))
}

// childArgs are the flags and environment a generator process gets to use the referee.
func (s *refereeSession) childArgs() (args, env []string, err error) {
	st, err := referee.Settings(s.flags.options("", ""))
	if err != nil {
		return nil, nil, err
	}
	for _, kv := range st.Env() {
		if v, ok := strings.CutPrefix(kv, conn.EnvPassword+"="); ok {
			env = append(env, referee.EnvPassword+"="+v)
		}
	}
	args = []string{"--referee", st.ChildAddrs()[0]}
	if s.flags.caFile != "" {
		args = append(args, "--referee-ca-file", s.flags.caFile)
	}
	if s.resource != "" {
		args = append(args, "--resource", s.resource)
	}
	return args, env, nil
}

// settle reads the run's count from the referee itself (every process's, a crashed one's too)
// into run, and clears the run's marks; the same for the resource kept on it.
func (s *refereeSession) settle(ctx context.Context, runID string, keys int, run *results.Run, ui *progressUI) {
	ctx = context.WithoutCancel(ctx)
	defer s.settleResource(ctx, runID, keys, run, ui)
	ref, err := s.open(ctx, runID, "parent")
	if err != nil {
		ui.line("referee: %v", err)
		return
	}
	defer ref.Close()
	n, examples, err := ref.RunViolations(ctx)
	if err != nil {
		ui.line("referee: %v", err)
		return
	}
	if run.Referee == nil {
		run.Referee = &results.Referee{Addr: ref.String()}
	}
	if n > run.Referee.Violations {
		run.Referee.Violations, run.Referee.Examples = n, examples
	}
	run.Violations = max(run.Violations, run.Referee.Violations)
	const shown = 3 // the result file keeps them all
	for i, e := range run.Referee.Examples {
		if i == shown {
			ui.line("referee: %s: %d more in the result file", run.Driver, len(run.Referee.Examples)-shown)
			break
		}
		ui.line("referee: %s: two holders at once: %s", run.Driver, e)
	}
	if err := ref.Clear(ctx, keys); err != nil {
		ui.line("referee: run %s's marks left until they expire: %v", runID, err)
	}
}

// close stops a native referee.
func (s *refereeSession) close() {
	if s != nil && s.native != nil {
		_ = s.native.Close()
	}
}

// process names process index of this run in the referee's holder names: index, host and pid,
// so that a violation says where each holder ran.
func process(index int) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("p%d@%s:%d", index, host, os.Getpid())
}
