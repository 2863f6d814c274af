package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/lockbench/lockbench/collect"
	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/pin"
	"github.com/lockbench/lockbench/referee"
	"github.com/lockbench/lockbench/resource"
	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/workloads"
)

// NativeReferee is the RefereeSpec address of a referee the session starts itself: a
// redis-server from PATH.
const NativeReferee = "native"

// ErrRefereeUnderTest is wrapped by StartReferee's and Work's errors when the referee is a node
// of the deployment under test: faults and load meant for the deployment would reach it.
// Such errors wrap ErrBadSpec too, as do a referee address or credentials it refuses.
var ErrRefereeUnderTest = referee.ErrUnderTest

// RefereeSpec is where a run's safety referee is and what is kept on it. It is a plain value.
type RefereeSpec struct {
	// Endpoint is the referee; the Addr NativeReferee starts one.
	Endpoint
	// Resource is the protected resource kept on it (resource.Fenced, resource.Plain); "" for
	// none.
	Resource string
	// NativeHost is where a native referee binds; "" is loopback.
	NativeHost string
	// ForResource says the native referee was asked for by Resource alone (its start line says
	// so).
	ForResource bool
	// NativeCPUs, if set, are the only CPUs a native referee's redis-server may run on: the
	// servers' side of the CPU placement (PinFlags.Referee), so that its command and Lua work
	// neither competes with the client nor inherits the client's CPUs from lockbench. Empty:
	// not placed (it runs where lockbench may). A referee at an address is not lockbench's to
	// place, and ignores it.
	NativeCPUs pin.CPUs
}

// Referee is a run's safety referee (package referee): every holder in every process marks its
// critical section there, and the run's count is read back from it. It is checked apart from
// the deployment under test. Its methods are safe for concurrent use.
type Referee struct {
	ep       Endpoint // a native referee's address resolved
	native   *compose.Single
	resource string
}

// StartReferee starts a native referee if spec asks for one, and refuses a referee that is a node
// of tgt, before anything is measured. Errors for a referee that is bad input wrap ErrBadSpec.
func StartReferee(ctx context.Context, tgt *target.Target, spec RefereeSpec, rep Reporter) (*Referee, error) {
	r := &Referee{ep: spec.Endpoint, resource: spec.Resource}
	if spec.Addr == NativeReferee {
		single, err := compose.StartSingle(ctx, compose.NativeOptions{Host: spec.NativeHost, CPUs: spec.NativeCPUs})
		if err != nil {
			return nil, fmt.Errorf("starting the native referee: %w", err)
		}
		r.native, r.ep.Addr = single, single.Addr()
		where := "native"
		if len(spec.NativeCPUs) > 0 {
			where += ", CPUs " + spec.NativeCPUs.String()
		}
		if spec.ForResource {
			where += ", started for --resource, which is kept on it"
		}
		rep.Line("referee: redis-server at %s (%s)", single.Addr(), where)
	}
	if err := r.checkApart(ctx, tgt, ProcessName(0)); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// options are the referee package's options for process proc of run runID.
func (r *Referee) options(runID, proc string) referee.Options {
	return referee.Options{Addr: r.ep.Addr, CAFile: r.ep.CAFile, RunID: runID, Process: proc}
}

// checkApart refuses a referee that is a node of the deployment under test.
func (r *Referee) checkApart(ctx context.Context, tgt *target.Target, proc string) error {
	ref, err := referee.Open(ctx, r.options("check", proc))
	if err != nil {
		if errors.Is(err, referee.ErrBadInput) || conn.Refused(err) {
			return &badSpec{msg: err.Error(), cause: err}
		}
		return err
	}
	defer ref.Close()
	var nodes []referee.Node
	for _, n := range tgt.Nodes() {
		nodes = append(nodes, referee.Node{Addr: n.Addr, Client: n.Client})
	}
	if err := ref.CheckApart(ctx, nodes); err != nil {
		if errors.Is(err, referee.ErrUnderTest) {
			return &badSpec{msg: err.Error() + ": faults and load meant for it would reach the referee; give a separate Redis, or --referee native", cause: err}
		}
		return err
	}
	return nil
}

// open connects process proc of run runID to the referee.
func (r *Referee) open(ctx context.Context, runID, proc string) (*referee.Referee, error) {
	return referee.Open(ctx, r.options(runID, proc))
}

// openResource connects process proc of run runID to the resource kept on the referee, or
// returns nil when the run has none.
func (r *Referee) openResource(ctx context.Context, runID, proc string) (*resource.Resource, error) {
	if r == nil || r.resource == "" {
		return nil, nil
	}
	return resource.Open(ctx, resource.Options{Kind: r.resource, Referee: r.options(runID, proc)})
}

// child returns what a generator process is given to use the referee: its endpoint without a
// password, and the environment that carries the password.
func (r *Referee) child() (ep Endpoint, env []string, err error) {
	st, err := referee.Settings(r.options("", ""))
	if err != nil {
		return ep, nil, err
	}
	for _, kv := range st.Env() {
		if v, ok := strings.CutPrefix(kv, conn.EnvPassword+"="); ok {
			env = append(env, referee.EnvPassword+"="+v)
		}
	}
	return Endpoint{Addr: st.ChildAddrs()[0], CAFile: r.ep.CAFile}, env, nil
}

// settle reads the run's count from the referee itself (every process's, a crashed one's too)
// into run, and clears the run's marks; the same for the resource kept on it.
func (r *Referee) settle(ctx context.Context, runID string, keys int, run *results.Run, rep Reporter) {
	ctx = context.WithoutCancel(ctx)
	defer r.settleResource(ctx, runID, keys, run, rep)
	ref, err := r.open(ctx, runID, "parent")
	if err != nil {
		rep.Line("referee: %v", err)
		return
	}
	defer ref.Close()
	n, examples, err := ref.RunViolations(ctx)
	if err != nil {
		rep.Line("referee: %v", err)
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
			rep.Line("referee: %s: %d more in the result file", run.Driver, len(run.Referee.Examples)-shown)
			break
		}
		rep.Line("referee: %s: two holders at once: %s", run.Driver, e)
	}
	if err := ref.Clear(ctx, keys); err != nil {
		rep.Line("referee: run %s's marks left until they expire: %v", runID, err)
	}
}

// settleResource reads the run's corrupt and stale writes from the resource itself (every
// process's, a crashed one's too) into run, and clears the run's resource.
func (r *Referee) settleResource(ctx context.Context, runID string, keys int, run *results.Run, rep Reporter) {
	res, err := r.openResource(ctx, runID, "parent")
	if res == nil || err != nil {
		if err != nil {
			rep.Line("resource: %v", err)
		}
		return
	}
	defer res.Close()
	corrupt, stale, err := res.RunCounts(ctx)
	if err != nil {
		rep.Line("resource: %v", err)
		return
	}
	if run.Resource == nil {
		run.Resource = &results.Resource{Kind: r.resource}
	}
	rs := run.Resource
	rs.CorruptWrites = max(rs.CorruptWrites, corrupt)
	rs.StaleRejected = max(rs.StaleRejected, stale)
	rep.Line("resource %s: %s: %d corrupt writes, %d stale writes rejected, %d leases lost at release (tokens: %s)",
		rs.Kind, run.Driver, rs.CorruptWrites, rs.StaleRejected, rs.LeasesLostAtRelease, rs.Tokens())
	if err := res.Clear(ctx, keys); err != nil {
		rep.Line("resource: run %s's state left until it expires: %v", runID, err)
	}
}

// Close stops a native referee. A nil *Referee is fine.
func (r *Referee) Close() {
	if r != nil && r.native != nil {
		_ = r.native.Close()
	}
}

// ProcessName names process index of a run in the referee's holder names: index, host and pid,
// so that a violation says where each holder ran.
func ProcessName(index int) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("p%d@%s:%d", index, host, os.Getpid())
}

// runHere is the Options.RunHere of a session with referee r: plan runs in this process, its
// workers mark their critical sections on r, and the run's count is read back from it.
func (r *Referee) runHere(rep Reporter) func(ctx context.Context, plan workloads.Plan) (results.Run, error) {
	return func(ctx context.Context, plan workloads.Plan) (results.Run, error) {
		return r.run(ctx, plan, rep)
	}
}

// run runs plan in this process with r; see runHere.
func (r *Referee) run(ctx context.Context, plan workloads.Plan, rep Reporter) (results.Run, error) {
	ref := r
	runID := collect.NewRunID()
	mark, err := ref.open(ctx, runID, ProcessName(0))
	if err != nil {
		return results.Run{}, err
	}
	defer mark.Close()
	plan.Config.Referee = mark
	res, err := ref.openResource(ctx, runID, ProcessName(0))
	if err != nil {
		return results.Run{}, err
	}
	if res != nil {
		defer res.Close()
		plan.Config.Resource = res
	}
	run, err := workloads.Run(ctx, plan)
	if err != nil {
		return run, err
	}
	run.Referee = mark.Result()
	cfg := plan.Config
	cfg.Fill()
	ref.settle(ctx, runID, cfg.Keys, &run, rep)
	return run, nil
}
