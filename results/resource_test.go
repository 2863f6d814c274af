package results

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteResource: one row per run with a resource, "no token" for a driver without fencing
// tokens, the referee's violations as double grants, and nothing at all without a resource.
func TestWriteResource(t *testing.T) {
	runs := []Run{
		{Driver: "unsafe", Resource: &Resource{Kind: "fenced", Writes: 10, CorruptWrites: 4}, Referee: &Referee{Violations: 3}},
		{Driver: "naive"},
		{Driver: "lockcore-fenced", Resource: &Resource{Kind: "fenced", Writes: 8, TokenWrites: 8, StaleRejected: 2, LeasesLostAtRelease: 2, Errors: 1}},
	}
	var buf bytes.Buffer
	if err := WriteResource(&buf, runs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := [][]string{
		{"resource", "driver", "tokens", "writes", "corrupt", "stale", "leases lost at release", "double grants"},
		{"fenced", "unsafe", "no token", "10", "4", "0", "0", "3"},
		{"fenced", "lockcore-fenced", "yes", "8", "0", "2", "2", "-", "1 writes failed"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, cells := range want {
		last := 0
		for _, c := range cells {
			j := strings.Index(lines[i][last:], c)
			if j < 0 {
				t.Errorf("line %d %q: no %q after column %d", i, lines[i], c, last)
				break
			}
			last += j + len(c)
		}
	}
	buf.Reset()
	if err := WriteResource(&buf, runs[1:2]); err != nil || buf.Len() != 0 {
		t.Errorf("without a resource: %q (%v), want nothing", buf.String(), err)
	}
}
