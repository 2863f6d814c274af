package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/results"
	"github.com/lockbench/lockbench/target"
)

// No silent zero (issue 36): a run that made no acquisition, or during which the servers refused
// commands or connections, fails with the cause named, even when the driver saw no error (a
// library that retries every failure, a refused subscription that only slows waiters).

// failRun marks run and its outcome failed for cause: the result keeps it (results.Run.Failed)
// and the user reads it.
func (s *Session) failRun(o *Outcome, run *results.Run, name, cause string) {
	o.Failed = true
	run.Failed = append(run.Failed, cause)
	s.rep.Line("lockbench run: %s: FAILED: %s", name, cause)
}

// checkSilentZero fails a run that made no acquisition, and one during which the servers
// refused something unexpected (results.ServerErrors.Refused): error replies other than
// results.ExpectedServerErrors, or rejected connections. Under lockbench's own faults the
// servers' refusals are what the faults cause (a restarted master's LOADING, a demoted one's
// READONLY): they are reported, not a failure; no acquisition at all still fails.
func (s *Session) checkSilentZero(ctx context.Context, name string, run *results.Run, o *Outcome) {
	if run.Acquisitions == 0 && run.Aborted == "" {
		s.failRun(o, run, name, "0 acquisitions in the measured phase: the lock never worked"+causeHint(run))
	}
	se := run.ServerErrors
	if !se.Refused() {
		return
	}
	if se.Unexpected()["NOPERM"] > 0 {
		se.ACLLog = aclLog(ctx, s.tgt, time.Duration(run.DurationS*float64(time.Second)))
	}
	cause := "the server refused during the measured phase: " + se.String()
	if len(se.ACLLog) > 0 {
		cause += " (ACL LOG: " + strings.Join(se.ACLLog, "; ") + ")"
	}
	cause = s.tgt.Conn().Redact(cause)
	if len(run.Faults) > 0 {
		s.rep.Line("lockbench run: %s: under faults, %s", name, cause)
		return
	}
	s.failRun(o, run, name, cause)
}

// causeHint returns ", errors: <kind: first message>" from the run's error samples, or "".
func causeHint(run *results.Run) string {
	if s := errorSamples(run); s != "" {
		return "; errors: " + s
	}
	return ""
}

// errorSamples returns the first message of every error kind, "kind: message; ...", sorted by
// kind; "" when the run kept none.
func errorSamples(run *results.Run) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(run.ErrorSamples)) {
		if msgs := run.ErrorSamples[k]; len(msgs) > 0 {
			parts = append(parts, k+": "+msgs[0])
		}
	}
	return strings.Join(parts, "; ")
}

// aclLogEntries is how many ACL LOG entries aclLog reads: the newest, which are the run's.
const aclLogEntries = 10

// aclLog returns the ACL LOG entries of the run's user updated within the last d (plus a
// second), one line each ("NOPERM command evalsha ×32"), from the first master. A user that may
// not read ACL LOG (a least-privilege one may not) gets one line saying so.
func aclLog(ctx context.Context, t *target.Target, d time.Duration) []string {
	ms := t.Masters()
	if len(ms) == 0 {
		return nil
	}
	user := t.Conn().User()
	if user == "" {
		user = "default"
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), target.InspectTimeout)
	defer cancel()
	c := ms[0].Client
	entries, err := c.Do(ctx, c.B().AclLog().Count(aclLogEntries).Build()).ToArray()
	if err != nil {
		return []string{fmt.Sprintf("not readable by user %q: %v", user, err)}
	}
	var out []string
	for _, e := range entries {
		m, err := e.AsMap()
		if err != nil {
			continue
		}
		field := func(k string) string { v := m[k]; s, _ := v.ToString(); return s }
		ageField, countField := m["age-seconds"], m["count"]
		age, _ := ageField.AsFloat64()
		count, _ := countField.AsInt64()
		if field("username") != user || time.Duration(age*float64(time.Second)) > d+time.Second {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s refused %d times", field("reason"), field("object"), count))
	}
	return out
}
