package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/results"
)

func TestStrandedOnly(t *testing.T) {
	t.Parallel()
	fault := []results.Fault{{Spec: "kill:master@1s"}}
	withTTL := results.LeftoverKey{Key: "lockbench:1", TTLMS: 200}
	noTTL := results.LeftoverKey{Key: "lockbench:2", TTLMS: -1}
	for _, tc := range []struct {
		name string
		run  results.Run
		want bool
	}{
		{"no faults", results.Run{Audit: &results.Audit{Leftovers: 1, Keys: []results.LeftoverKey{withTTL}}}, false},
		{"no audit", results.Run{Faults: fault}, false},
		{"nothing left", results.Run{Faults: fault, Audit: &results.Audit{}}, false},
		{"all with a TTL", results.Run{Faults: fault, Audit: &results.Audit{Leftovers: 1, Keys: []results.LeftoverKey{withTTL}}}, true},
		{"one without", results.Run{Faults: fault, Audit: &results.Audit{Leftovers: 2, Keys: []results.LeftoverKey{withTTL, noTTL}}}, false},
		{"more than listed", results.Run{Faults: fault, Audit: &results.Audit{Leftovers: 30, Keys: []results.LeftoverKey{withTTL}}}, false},
	} {
		if got := strandedOnly(&tc.run); got != tc.want {
			t.Errorf("%s: strandedOnly = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStaysDown(t *testing.T) {
	t.Parallel()
	parse := func(specs ...string) []faults.Fault {
		var out []faults.Fault
		for _, s := range specs {
			f, err := faults.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, f)
		}
		return out
	}
	for _, tc := range []struct {
		specs []string
		want  string
	}{
		{[]string{"kill:master@1s"}, "master"},
		{[]string{"kill:master@1s", "restart:master@2s"}, ""},
		{[]string{"kill:master@1s", "kill:replica1@1s", "restart:master@2s", "pause:replica2@1s+1s"}, "replica1"},
		{[]string{"failover@1s"}, ""},
	} {
		if got := staysDown(parse(tc.specs...)); got != tc.want {
			t.Errorf("staysDown(%q) = %q, want %q", tc.specs, got, tc.want)
		}
	}
}

// A run's faults are recorded in the order given: a scheduled fault from its event, a stall from
// the account the generator's workload gave of it (with the spec as the user wrote it), a stall
// whose generator left none as failed, and one the phase never reached as not fired.
func TestFaultRunRecordsInOrder(t *testing.T) {
	t.Parallel()
	var fs []faults.Fault
	for _, s := range []string{"stall:gen1@1s+1s", "pause-client:gen2@500ms+1s", "stall:gen2@3s+1s", "stall:proc1@4s+500ms"} {
		f, err := faults.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	fr := &FaultRun{faults: fs, events: make([]faults.Event, len(fs))}
	fr.events[1] = faults.Event{Fault: fs[1], Addr: "pid 42", Fired: true, FiredAt: 500 * time.Millisecond, Lasted: time.Second}
	two := int64(2)
	run := results.Run{Faults: []results.Fault{ // as the workloads of gen1 recorded them
		{Spec: "stall:gen1@4s+500ms", Action: "stall", Node: "gen1", AtS: 4, ForS: 0.5},
		{Spec: "stall:gen1@1s+1s", Action: "stall", Node: "gen1", AtS: 1, ForS: 1, Fired: true, FiredS: 1, LastedS: 1, StalledWorkers: &two},
	}}
	fr.record(&run)
	got := run.Faults
	if len(got) != 4 {
		t.Fatalf("faults %+v; want 4", got)
	}
	if got[0].Spec != "stall:gen1@1s+1s" || !got[0].Fired || got[0].StalledWorkers == nil || *got[0].StalledWorkers != 2 {
		t.Errorf("first %+v; want gen1's stall as its workload recorded it", got[0])
	}
	if got[1].Action != "pause-client" || got[1].Addr != "pid 42" || !got[1].Fired || got[1].LastedS != 1 {
		t.Errorf("second %+v; want the pause's event", got[1])
	}
	if got[2].Spec != "stall:gen2@3s+1s" || got[2].Fired || !strings.Contains(got[2].Error, "gen2 left no result") {
		t.Errorf("third %+v; want gen2's stall without an account, failed", got[2])
	}
	if got[3].Spec != "stall:proc1@4s+500ms" || got[3].Fired || got[3].Error != faults.ErrNotFired.Error() {
		t.Errorf("fourth %+v; want the stall the phase did not reach, as written, not fired", got[3])
	}
}
