package results

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestWriteFairness(t *testing.T) {
	start := time.Now()
	single := Run{Driver: "naive", Complete: true}
	single.SetWorkerFairness([]int64{10, 10, 0, 0})
	merged, err := MergeProcesses([]Run{processRun(t, 0, 3, start, time.Millisecond, 4, 4), processRun(t, 2, 3, start, time.Millisecond, 8, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var old Run // a file from before fairness: left out
	var b bytes.Buffer
	if err := WriteFairness(&b, []Run{single, merged, old}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"naive     1      4        0.5000        1          -", // two of four workers served alike
		"lockcore  1      4        0.6667        2/3",
		"lockcore round 1: 3 processes, started within 0.0ms, merged 16 acquisitions",
		"LOST: no result from process 1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := WriteFairness(&b, []Run{old}); err != nil || b.Len() != 0 {
		t.Errorf("runs without fairness: %q, %v; want nothing", b.String(), err)
	}
}
