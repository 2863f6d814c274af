package main

import (
	"testing"

	"github.com/lockbench/lockbench/bench"
)

// TestExecDriversGetTheReferee: lockbench run with an external driver and no --referee gets a
// native referee; a named referee, a run without exec: drivers and a worker keep theirs.
func TestExecDriversGetTheReferee(t *testing.T) {
	for _, tc := range []struct {
		cmd, addr string
		drivers   []string
		want      string
	}{
		{cmdRun, "", []string{"lockcore", "exec:null=/bin/null-adapter"}, bench.NativeReferee},
		{cmdRun, "127.0.0.1:7777", []string{"exec:null=/bin/null-adapter"}, "127.0.0.1:7777"},
		{cmdRun, "", []string{"lockcore", "naive"}, ""},
		{cmdWorker, "", []string{"exec:null=/bin/null-adapter"}, ""},
		{cmdRun, refereeOff, []string{"exec:null=/bin/null-adapter"}, ""},
	} {
		g := refereeFlags{addr: tc.addr}
		if msg := g.defaultFor(tc.cmd, tc.drivers); msg != "" || g.addr != tc.want {
			t.Errorf("%s %v with --referee %q: referee %q (%q), want %q", tc.cmd, tc.drivers, tc.addr, g.addr, msg, tc.want)
		}
	}
	g := refereeFlags{addr: refereeOff}
	if msg := g.defaultFor(cmdWorker, nil); msg == "" {
		t.Error("a worker's --referee off accepted")
	}
}
