package results

import (
	"bytes"
	"fmt"
	"io"
	"text/tabwriter"
)

// Resource is what the protected resource (lockbench run --resource, package resource) saw of a
// run, or of one process's share, warm-up included like Violations: every holder wrote to it at
// the start and at the end of its critical section. It is a plain value.
type Resource struct {
	// Kind is the resource: "fenced" (rejects a write whose fencing token is below the highest
	// it has seen for the lock) or "plain" (accepts every write).
	Kind string `json:"kind"`
	// Writes counts the writes sent; TokenWrites those that carried a fencing token. A driver
	// without tokens has none to pass (TokenWrites 0): a fenced resource cannot turn its stale
	// holders away.
	Writes      int64 `json:"writes"`
	TokenWrites int64 `json:"token_writes"`
	// CorruptWrites counts the writes the resource accepted that closed a critical section into
	// which another holder's write had fallen: two holders' read-modify-writes interleaved on
	// the data the lock was meant to protect.
	CorruptWrites int64 `json:"corrupt_writes"`
	// StaleRejected counts the writes a fenced resource turned away: their token was below one
	// it had already accepted for the lock (a holder whose lease had run out, come back late).
	StaleRejected int64 `json:"stale_rejected"`
	// LeasesLostAtRelease counts the holders whose release found that the lock was no longer
	// theirs: they learnt of their lost lease only after their critical section.
	LeasesLostAtRelease int64 `json:"leases_lost_at_release"`
	// Errors counts the writes that failed (the referee did not answer): writes it did not see.
	Errors int64 `json:"errors,omitempty"`
}

// add adds o's counts to r.
func (r *Resource) add(o *Resource) {
	if r.Kind == "" {
		r.Kind = o.Kind
	}
	r.Writes += o.Writes
	r.TokenWrites += o.TokenWrites
	r.CorruptWrites += o.CorruptWrites
	r.StaleRejected += o.StaleRejected
	r.LeasesLostAtRelease += o.LeasesLostAtRelease
	r.Errors += o.Errors
}

// Tokens says whether the run's holders passed fencing tokens: "yes", or "no token" for a
// driver that has none.
func (r *Resource) Tokens() string {
	if r.TokenWrites > 0 {
		return "yes"
	}
	return "no token"
}

// WriteResource writes a table of what the protected resource saw, one row per run that had
// one: writes, whether they carried tokens, corrupt writes, stale writes rejected, leases lost
// at release and double grants (the referee's violations). It writes nothing when no run had
// a resource. It is safe for concurrent use with distinct writers.
func WriteResource(w io.Writer, runs []Run) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	rows := 0
	for i := range runs {
		r := &runs[i]
		res := r.Resource
		if res == nil {
			continue
		}
		if rows == 0 {
			fmt.Fprintln(tw, "resource\tdriver\ttokens\twrites\tcorrupt writes\tstale rejected\tleases lost at release\tdouble grants")
		}
		rows++
		grants := "-"
		if r.Referee != nil {
			grants = fmt.Sprint(r.Referee.Violations)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s", res.Kind, r.Driver, res.Tokens(), res.Writes, res.CorruptWrites,
			res.StaleRejected, res.LeasesLostAtRelease, grants)
		if res.Errors > 0 {
			fmt.Fprintf(tw, "\t%d writes failed", res.Errors)
		}
		fmt.Fprintln(tw)
	}
	if rows == 0 {
		return nil
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
