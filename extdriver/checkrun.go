package extdriver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/referee"
)

// CheckRun is lockbench driver-check: the conformance check (Check) of one adapter against a
// Redis and a referee, each given by address or started for the check. It is a plain value.
type CheckRun struct {
	// Adapter is an exec driver spec, "exec:NAME=COMMAND", or a bare COMMAND (see Spec).
	Adapter string
	// Addr is the Redis the adapter uses (host:port, redis://; password in conn.EnvPassword);
	// "": a native redis-server started for the check.
	Addr string
	// Referee is the referee Redis, not the one under test; "": one started for the check.
	Referee string
	// Duration and Owners are the exclusion rule's (CheckOptions).
	Duration time.Duration
	Owners   int
	// Out gets one line per rule (CheckOptions.Out), then the referee's violations, if any.
	Out io.Writer
}

// Spec is the adapter's exec driver spec: Adapter, or a bare command as the adapter "adapter".
func (r CheckRun) Spec() string {
	if strings.HasPrefix(r.Adapter, SchemePrefix+":") {
		return r.Adapter
	}
	return SchemePrefix + ":adapter=" + r.Adapter
}

// Validate returns what is wrong with r before anything starts, as an error wrapping
// ErrBadCheck whose text is the complaint alone (naming driver-check's flags), or nil.
func (r CheckRun) Validate() error {
	if _, err := ParseSpec(r.Spec()); err != nil {
		return badCheck{err}
	}
	if r.Duration <= 0 || r.Owners < 2 {
		return badCheck{errors.New("--duration must be positive and --owners at least 2")}
	}
	return nil
}

// RunCheck runs r, checked by Validate: it starts the Redis and the referee it is not given,
// runs Check with every holder of the exclusion rule marked on the referee and the keys rule
// on the adapter's Redis, and says on Out
// how many mutual-exclusion violations the referee counted. It returns the broken rules; an
// error wrapping ErrBadCheck for bad input (the adapter, --addr, --referee); another error when
// a Redis could not be started or the referee did not answer. It stops what it started.
func RunCheck(ctx context.Context, r CheckRun) ([]Failure, error) {
	if r.Addr == "" {
		s, err := compose.StartSingle(ctx, compose.NativeOptions{})
		if err != nil {
			return nil, fmt.Errorf("starting a Redis: %w", err)
		}
		defer s.Close()
		r.Addr = s.Addr()
	}
	s, err := conn.New(conn.Options{Addrs: []string{r.Addr}})
	if err != nil {
		return nil, badCheck{fmt.Errorf("--addr: %w", err)}
	}
	cfg := drivers.Config{Topology: compose.KindSingle, Addrs: s.Addrs(), Conn: s}
	keys, err := s.SingleClient(0) // the keys rule's SCANs
	if err != nil {
		return nil, badCheck{fmt.Errorf("--addr: %w", err)}
	}
	defer keys.Close()
	if r.Referee == "" {
		rs, err := compose.StartSingle(ctx, compose.NativeOptions{})
		if err != nil {
			return nil, fmt.Errorf("starting the referee: %w", err)
		}
		defer rs.Close()
		r.Referee = rs.Addr()
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	ref, err := referee.Open(rctx, referee.Options{Addr: r.Referee, RunID: fmt.Sprintf("driver-check-%d", os.Getpid()), Process: "driver-check"})
	cancel()
	if err != nil {
		if errors.Is(err, referee.ErrBadInput) {
			return nil, badCheck{fmt.Errorf("--referee: %w", err)}
		}
		return nil, err
	}
	defer ref.Close()
	fails, err := Check(ctx, CheckOptions{Spec: r.Spec(), Config: cfg, Marker: ref, Duration: r.Duration, Owners: r.Owners, Out: r.Out, Redis: keys})
	if err != nil {
		return nil, err
	}
	if res := ref.Result(); res.Violations > 0 && r.Out != nil {
		fmt.Fprintf(r.Out, "referee: %d mutual-exclusion violations, e.g. %s\n", res.Violations, strings.Join(res.Examples[:min(3, len(res.Examples))], "; "))
	}
	return fails, nil
}

// badCheck is bad input to driver-check: the cause's text alone, wrapping ErrBadCheck.
type badCheck struct{ err error }

func (e badCheck) Error() string   { return e.err.Error() }
func (e badCheck) Unwrap() []error { return []error{ErrBadCheck, e.err} }
