package results

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CommandStat is one line of Redis INFO commandstats. It is a plain value and
// safe for concurrent use.
type CommandStat struct {
	Calls, Usec, RejectedCalls, FailedCalls int64
}

// CommandStats maps a lower-case command name, such as "evalsha" or
// "client|setinfo", to its stats. It is safe for concurrent reads.
type CommandStats map[string]CommandStat

// ParseCommandStats parses the text of INFO commandstats: lines such as
// "cmdstat_get:calls=3,usec=9,usec_per_call=3.00,rejected_calls=0,failed_calls=0"
// with LF or CRLF endings. Section headers, blank lines, other INFO lines and
// unknown fields are ignored, so the text of a full INFO works too; a
// cmdstat line that is malformed or lacks calls is an error. It is safe for
// concurrent use.
func ParseCommandStats(info string) (CommandStats, error) {
	stats := CommandStats{}
	for i, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "cmdstat_")
		if !ok {
			continue
		}
		name, fields, ok := strings.Cut(rest, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("commandstats line %d: %q: want cmdstat_<name>:<fields>", i+1, line)
		}
		var st CommandStat
		hasCalls := false
		for _, field := range strings.Split(fields, ",") {
			key, value, ok := strings.Cut(field, "=")
			if !ok {
				return nil, fmt.Errorf("commandstats line %d: %q: field %q is not key=value", i+1, line, field)
			}
			var dst *int64
			switch key {
			case "calls":
				dst, hasCalls = &st.Calls, true
			case "usec":
				dst = &st.Usec
			case "rejected_calls":
				dst = &st.RejectedCalls
			case "failed_calls":
				dst = &st.FailedCalls
			default:
				continue
			}
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("commandstats line %d: %q: %s: %w", i+1, line, key, err)
			}
			*dst = n
		}
		if !hasCalls {
			return nil, fmt.Errorf("commandstats line %d: %q: no calls field", i+1, line)
		}
		stats[strings.ToLower(name)] = st
	}
	return stats, nil
}

// Sub returns after minus before, per command. Commands absent from before
// count from zero and commands with no change are left out. A negative
// delta means the server's stats were reset in between (CONFIG RESETSTAT or a
// restart) and is kept, so the problem shows. It is safe for concurrent use.
func (after CommandStats) Sub(before CommandStats) CommandStats {
	delta := CommandStats{}
	for name, a := range after {
		b := before[name]
		d := CommandStat{
			Calls:         a.Calls - b.Calls,
			Usec:          a.Usec - b.Usec,
			RejectedCalls: a.RejectedCalls - b.RejectedCalls,
			FailedCalls:   a.FailedCalls - b.FailedCalls,
		}
		if d != (CommandStat{}) {
			delta[name] = d
		}
	}
	return delta
}

// Add returns the per-command sum of s and other, to combine the stats of
// several servers (cluster primaries, sentinel replicas). It is safe for
// concurrent use.
func (s CommandStats) Add(other CommandStats) CommandStats {
	sum := make(CommandStats, len(s))
	for _, m := range []CommandStats{s, other} {
		for name, st := range m {
			t := sum[name]
			t.Calls += st.Calls
			t.Usec += st.Usec
			t.RejectedCalls += st.RejectedCalls
			t.FailedCalls += st.FailedCalls
			sum[name] = t
		}
	}
	return sum
}

// Total returns the sum of Calls over all commands except the named ones;
// lockbench leaves out its own "info". Commands run inside Lua scripts are
// counted by Redis and so are included. It is safe for concurrent use.
func (s CommandStats) Total(exclude ...string) int64 {
	var n int64
	for name, st := range s {
		if !slices.Contains(exclude, name) {
			n += st.Calls
		}
	}
	return n
}
