package report

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/results"
)

// A run with faults gets a marker line per fired fault on the throughput chart, named in its
// legend and caption; one without gets neither.
func TestTimelineMarksFaults(t *testing.T) {
	run := fakeRun(t, runSpec{driver: "lockcore", n: 2000, median: 150 * time.Microsecond, tput: 40000, timeline: true, seed: 3, complete: true})
	plain, err := Build([]Source{roundTrip(t, newFile(run))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	run.Faults = []results.Fault{
		{Spec: "kill:master@10ms", Action: "kill", AtS: 0.01, Fired: true, FiredS: 0.0102},
		{Spec: "kill:replica1@1s", Action: "kill", AtS: 1, Error: "not fired: the phase ended first"},
	}
	marked, err := Build([]Source{roundTrip(t, newFile(run))}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	caption := func(r *Report) string {
		for _, c := range r.Charts {
			if c.ID == "timeline-throughput" {
				return c.Caption
			}
		}
		t.Fatal("no throughput timeline")
		return ""
	}
	if strings.Contains(caption(plain), "fault") && strings.Contains(caption(plain), "Gray") {
		t.Errorf("a run without faults has fault marks: %q", caption(plain))
	}
	if !strings.Contains(caption(marked), "when a --fault fired") {
		t.Errorf("caption of a run with a fault: %q", caption(marked))
	}
	// One line for the fault that fired, none for the one that did not.
	if n := faultMarks(newPlot("t", "x", "y"), marked.groups, nil); n != 1 {
		t.Errorf("%d fault marks; want 1", n)
	}
	if n := faultMarks(newPlot("t", "x", "y"), plain.groups, nil); n != 0 {
		t.Errorf("%d fault marks without faults", n)
	}
}
