package results

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// ExpectedServerErrors are the error replies a healthy run draws from Redis on purpose, by
// prefix (INFO errorstats' errorstat_<PREFIX>), with the reason: ServerErrors.Unexpected leaves
// them out, so they fail no run.
var ExpectedServerErrors = map[string]string{
	// A client runs a script by its SHA1 first and sends the body on NOSCRIPT: once per script
	// and server (per connection racing the first load), handled by every driver's client.
	"NOSCRIPT": "EVALSHA before the script is cached: the client loads it and retries (once per script)",
	// The generic prefix. Client libraries draw it in every connection's handshake on servers
	// before 7.2 (go-redis and rueidis send CLIENT SETINFO; go-redis also CLIENT
	// MAINT_NOTIFICATIONS), and which connection or which phase a handshake belongs to cannot be
	// told from the counters: a run of several processes dials while another's phase runs. The
	// refusals that matter have prefixes of their own (NOPERM, OOM, READONLY, LOADING,
	// MASTERDOWN, BUSY, NOAUTH, WRONGPASS) or counters (rejected_connections), and an ERR that
	// fails a lock call is counted by the driver.
	"ERR": "client handshakes on servers before Redis 7.2 (CLIENT SETINFO) draw it on every new connection; recorded, not failed on",
}

// ServerErrors is what the servers refused during a measured phase, from INFO errorstats and
// INFO stats: the error replies they sent, by prefix (NOPERM, ERR, OOM, ...), and the
// connections they turned away (maxclients). It is a plain value.
type ServerErrors struct {
	// Replies is the error replies sent, by prefix, over every measured node, the expected ones
	// (ExpectedServerErrors) included.
	Replies map[string]int64 `json:"replies,omitempty"`
	// RejectedConnections is connections refused for maxclients (INFO stats).
	RejectedConnections int64 `json:"rejected_connections,omitempty"`
	// ConnectionsReceived is the connections the servers accepted (INFO stats'
	// total_connections_received), to read the other counts by.
	ConnectionsReceived int64 `json:"connections_received,omitempty"`
	// ACLLog is the server's ACL LOG entries for the run's user that changed during the phase,
	// one line each (command or key refused, and how often), or why it could not be read.
	ACLLog []string `json:"acl_log,omitempty"`
}

// Unexpected returns the error replies not in ExpectedServerErrors, by prefix; nil when none.
func (s *ServerErrors) Unexpected() map[string]int64 {
	if s == nil {
		return nil
	}
	var out map[string]int64
	for k, n := range s.Replies {
		if _, ok := ExpectedServerErrors[k]; ok || n <= 0 {
			continue
		}
		if out == nil {
			out = make(map[string]int64)
		}
		out[k] = n
	}
	return out
}

// Refused reports whether the servers refused anything unexpected: an error reply outside
// ExpectedServerErrors or a connection.
func (s *ServerErrors) Refused() bool {
	return s != nil && (len(s.Unexpected()) > 0 || s.RejectedConnections > 0)
}

// String names what was refused, e.g. "error replies NOPERM 32; rejected_connections 103".
func (s *ServerErrors) String() string {
	if s == nil {
		return "none"
	}
	var parts []string
	if u := s.Unexpected(); len(u) > 0 {
		var kinds []string
		for _, k := range slices.Sorted(maps.Keys(u)) {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, u[k]))
		}
		parts = append(parts, "error replies "+strings.Join(kinds, ", "))
	}
	if s.RejectedConnections > 0 {
		parts = append(parts, fmt.Sprintf("rejected_connections %d (\"ERR max number of clients reached\": the server's maxclients is too low for the run's connections)", s.RejectedConnections))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// ParseErrorStats reads INFO errorstats ("errorstat_NOPERM:count=3") into counts by prefix.
// Servers before Redis 6.2 have no such section: an empty map. It is safe for concurrent use.
func ParseErrorStats(info string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		key, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		prefix, ok := strings.CutPrefix(key, "errorstat_")
		if !ok {
			continue
		}
		v, ok := strings.CutPrefix(value, "count=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("INFO errorstats: %s: %q is not count=N", key, value)
		}
		out[prefix] = n
	}
	return out, nil
}

// ParseConnectionStats reads rejected_connections and total_connections_received from INFO
// stats; 0 for a field that is absent. It is safe for concurrent use.
func ParseConnectionStats(info string) (rejected, received int64, err error) {
	for _, line := range strings.Split(info, "\n") {
		key, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		var dst *int64
		switch {
		case !ok:
			continue
		case key == "rejected_connections":
			dst = &rejected
		case key == "total_connections_received":
			dst = &received
		default:
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, fmt.Errorf("INFO stats: %s: %q is not a count", key, v)
		}
		*dst = n
	}
	return rejected, received, nil
}

// serverErrors sums the refusals of a delta (see ServerStats.Sub) over its nodes; nil when there
// were none.
func (delta ServerStats) serverErrors() *ServerErrors {
	var s ServerErrors
	for _, n := range delta {
		for k, c := range n.ErrorReplies {
			if c > 0 {
				s.Replies = addCounts(s.Replies, map[string]int64{k: c})
			}
		}
		s.RejectedConnections += max(n.RejectedConnections, 0)
		s.ConnectionsReceived += max(n.ConnectionsReceived, 0)
	}
	if len(s.Replies) == 0 && s.RejectedConnections == 0 {
		return nil
	}
	return &s
}

// subCounts returns a minus b, key by key, leaving out keys that did not grow. A counter that
// went down (CONFIG RESETSTAT, a restart) counts from zero.
func subCounts(a, b map[string]int64) map[string]int64 {
	var out map[string]int64
	for k, n := range a {
		d := n - b[k]
		if n < b[k] {
			d = n
		}
		if d <= 0 {
			continue
		}
		if out == nil {
			out = make(map[string]int64)
		}
		out[k] = d
	}
	return out
}

// subCount returns a minus b; a when the counter went down (CONFIG RESETSTAT, a restart).
func subCount(a, b int64) int64 {
	if a < b {
		return a
	}
	return a - b
}

// mergeServerErrors combines two processes' readings of the same servers over overlapping
// phases: the larger count of each, since both saw the same counters move.
func mergeServerErrors(a, b *ServerErrors) *ServerErrors {
	if b == nil {
		return a
	}
	if a == nil {
		c := *b
		c.Replies = maps.Clone(b.Replies)
		c.ACLLog = slices.Clone(b.ACLLog)
		return &c
	}
	for k, n := range b.Replies {
		if n > a.Replies[k] {
			if a.Replies == nil {
				a.Replies = make(map[string]int64)
			}
			a.Replies[k] = n
		}
	}
	a.RejectedConnections = max(a.RejectedConnections, b.RejectedConnections)
	a.ConnectionsReceived = max(a.ConnectionsReceived, b.ConnectionsReceived)
	return a
}

// ServerStall is the longest time during a measured phase that a master left lockbench's PING
// unanswered, when it reached the run's threshold (lockbench run --stall-threshold). It is a
// plain value.
type ServerStall struct {
	// Addr is the master; AtS is when the stall began, in seconds from the start of the measured
	// phase; LongestS how long it lasted within the phase; ThresholdS the threshold it reached.
	Addr       string  `json:"addr"`
	AtS        float64 `json:"at_s"`
	LongestS   float64 `json:"longest_s"`
	ThresholdS float64 `json:"threshold_s"`
}
