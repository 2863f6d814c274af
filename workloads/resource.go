package workloads

import (
	"sync/atomic"

	"github.com/lockbench/lockbench/results"
)

// Resource is the data a lock protects, kept outside the lock (package resource): every holder
// writes to it at the start and at the end of its critical section, with its grant's fencing
// token when its driver has one, and it counts the writes that interleaved with another
// holder's and those it turned away as stale. It tells what a lost lease costs the data, which
// the checkers, counting holders, cannot. Its methods are called by many workers at once and
// must be safe for concurrent use; Write does not fail (a resource that does not answer counts
// its own errors) and must return in bounded time.
type Resource interface {
	// Write writes as worker to the resource of lock key: token is the grant's fencing token
	// when hasToken, end says whether the write closes the critical section or opens it.
	Write(key, worker int, token int64, hasToken, end bool)
	// Result returns what the writes of this process found so far.
	Result() *results.Resource
}

// resourceWriter is a cycle's access to Config.Resource, and the count of holders that found
// at release that their lease was gone. It is safe for concurrent use.
type resourceWriter struct {
	res  Resource // nil: no resource
	lost atomic.Int64
}

// write writes to the resource when there is one.
func (w *resourceWriter) write(key, worker int, token int64, hasToken, end bool) {
	if w.res != nil {
		w.res.Write(key, worker, token, hasToken, end)
	}
}

// result returns the resource's figures with the leases lost at release, or nil without a
// resource.
func (w *resourceWriter) result() *results.Resource {
	if w.res == nil {
		return nil
	}
	r := w.res.Result()
	r.LeasesLostAtRelease = w.lost.Load()
	return r
}

// WritesResource reports whether w's holders write to Config.Resource: contention's do. Other
// workloads refuse a Config with a Resource (CheckConfig): their holders would write nothing,
// and a resource with no writes would read as a safe one.
func WritesResource(w Workload) bool {
	_, ok := w.(interface{ writesResource() })
	return ok
}

// ResourceReporter is an Instance whose holders write to Config.Resource (contention).
// Implementations are safe for concurrent use.
type ResourceReporter interface {
	// Resource returns what the resource saw so far, or nil when the run has none.
	Resource() *results.Resource
}
