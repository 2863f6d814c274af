package results

import (
	"strconv"
	"strings"
)

// Placement is where a file's runs ran: the CPUs of the Redis servers lockbench started and of
// lockbench itself (with its generator processes). Figures measured with client and server on
// shared CPUs include their contention for them; placed apart, the server's CPU per acquisition
// is what one Redis core spends. It is a plain value.
type Placement struct {
	// Mode is how the CPUs were chosen: "auto" (split by lockbench), "manual" (--server-cpus,
	// --client-cpus) or "off" (not placed).
	Mode string `json:"mode"`
	// ServerCPUs and ClientCPUs are CPU lists as taskset writes them ("1", "0-3"); empty: not
	// placed (any CPU).
	ServerCPUs string `json:"server_cpus,omitempty"`
	ClientCPUs string `json:"client_cpus,omitempty"`
	// GOMAXPROCS is the client's, as it ran.
	GOMAXPROCS int `json:"gomaxprocs"`
	// Shared is true when client and server could run on the same CPU: unplaced, overlapping
	// lists, or a deployment lockbench did not start.
	Shared bool `json:"shared"`
	// Note says why the placement is what it is when that is not what was asked (one CPU, not
	// Linux, an attached deployment).
	Note string `json:"note,omitempty"`
}

// String says where the runs ran, in one line for the summary.
func (p *Placement) String() string {
	if p == nil {
		return ""
	}
	where := func(list string) string {
		if list == "" {
			return "any CPU"
		}
		if !strings.ContainsAny(list, ",-") {
			return "CPU " + list
		}
		return "CPUs " + list
	}
	var s string
	switch {
	case p.Mode == "off":
		s = "CPU placement off: redis-server and lockbench on any CPU"
	case p.ServerCPUs == "" && p.ClientCPUs == "":
		s = "CPU placement: none"
	case p.ServerCPUs == "":
		s = "CPU placement: lockbench on " + where(p.ClientCPUs)
	default:
		s = "CPU placement: redis-server on " + where(p.ServerCPUs) + ", lockbench on " + where(p.ClientCPUs)
	}
	s += " (GOMAXPROCS " + strconv.Itoa(p.GOMAXPROCS) + ", --pin " + p.Mode + ")"
	if p.Shared {
		s += "; client and server share CPUs: the figures include their contention"
	}
	if p.Note != "" {
		s += "; " + p.Note
	}
	return s
}
