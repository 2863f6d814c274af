package results

import "maps"

// MaxErrorSamples is how many distinct messages Run.ErrorSamples keeps per error kind: enough to
// name a cause ("ERR max number of clients reached") without a refused run's thousands of
// identical lines.
const MaxErrorSamples = 3

// addSample appends msg to kind's samples in m unless it is already there or the kind has
// MaxErrorSamples, and returns m (allocated when nil and msg is kept).
func addSample(m map[string][]string, kind, msg string) map[string][]string {
	if msg == "" {
		return m
	}
	have := m[kind]
	if len(have) >= MaxErrorSamples {
		return m
	}
	for _, s := range have {
		if s == msg {
			return m
		}
	}
	if m == nil {
		m = make(map[string][]string)
	}
	m[kind] = append(have, msg)
	return m
}

// mergeSamples adds b's samples to a's, kind by kind, up to MaxErrorSamples each, and returns a.
func mergeSamples(a, b map[string][]string) map[string][]string {
	for kind, msgs := range b {
		for _, msg := range msgs {
			a = addSample(a, kind, msg)
		}
	}
	return a
}

// cloneSamples returns a deep copy of m; nil for an empty m.
func cloneSamples(m map[string][]string) map[string][]string {
	if len(m) == 0 {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// AddError counts n errors of kind in the run, and keeps msg (if not empty) among the kind's
// samples: for errors found after the measured phase (a server's refusals, a driver's failed
// subscriptions) rather than by a Recorder. It is not safe for concurrent use on the same Run.
func (r *Run) AddError(kind string, n int64, msg string) {
	if n <= 0 {
		return
	}
	if r.ErrorsByKind == nil {
		r.ErrorsByKind = make(map[string]int64)
	}
	r.ErrorsByKind[kind] += n
	r.Errors += n
	r.ErrorSamples = addSample(r.ErrorSamples, kind, msg)
}

// RedactSamples rewrites every error sample with redact (a connection's Redact, which hides its
// password), before the run is printed or written. It is not safe for concurrent use on the
// same Run.
func (r *Run) RedactSamples(redact func(string) string) {
	for _, msgs := range r.ErrorSamples {
		for i, m := range msgs {
			msgs[i] = redact(m)
		}
	}
}
