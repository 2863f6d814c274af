package results

import (
	"bytes"
	"strings"
	"testing"
)

// Runs with different --net conditions are different cases, and the summary names the conditions;
// runs without --net keep the case they always had.
func TestNetIsACaseField(t *testing.T) {
	direct := Run{Driver: "naive", Workload: "contention", Topology: "single", Concurrency: 1, Keys: 1, KeyDist: "uniform", Complete: true}
	slow := direct
	slow.Net = "latency=1ms"
	if direct.Case().Get("net") != "" || strings.Contains(direct.Case().String(), "net=") {
		t.Errorf("a direct run's case mentions net: %v", direct.Case())
	}
	if slow.Case().Get("net") != "latency=1ms" || slow.Case().String() == direct.Case().String() {
		t.Errorf("case with --net %v, without %v: want them apart", slow.Case(), direct.Case())
	}
	if g := GroupRuns([]Run{direct, slow}); len(g) != 2 {
		t.Errorf("%d groups, want 2: runs with and without --net do not group", len(g))
	}

	var buf bytes.Buffer
	if err := WriteSummary(&buf, []Run{direct}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "network") {
		t.Errorf("summary of direct runs mentions the network:\n%s", buf.String())
	}
	buf.Reset()
	if err := WriteSummary(&buf, []Run{direct, slow}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "network between clients and Redis: none (direct); latency=1ms") {
		t.Errorf("summary does not name both conditions:\n%s", buf.String())
	}
}
