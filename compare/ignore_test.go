package compare

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// withNet is f with every run's --net set to net, as a run with netem in front of Redis records.
func withNet(f *results.File, net string) *results.File {
	for i := range f.Runs {
		f.Runs[i].Net = net
	}
	return f
}

// TestIgnoreComparesAcrossAField checks the acceptance of an environment-change gate: a NEW run
// with --net latency=1ms that is 25% slower is refused without --ignore (naming the option that
// would match it), and with --ignore net it is compared, regresses and says what it ignored.
func TestIgnoreComparesAcrossAField(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	base := synthFile(rng, 8, 1, "lockcore")
	new := withNet(synthFile(rng, 8, 1.25, "lockcore"), "latency=1ms")

	_, err := Compare([]*results.File{base}, []*results.File{new}, Options{})
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "--ignore net") {
		t.Fatalf("without --ignore: %v, want ErrBadInput suggesting --ignore net", err)
	}

	rep := compareFiles(t, base, new, Options{Ignore: []string{"net"}})
	if rep.Verdict != VerdictRegression || !rep.Failed() {
		t.Fatalf("verdict %s, want a regression", rep.Verdict)
	}
	if len(rep.Groups) != 1 || strings.Contains(rep.Groups[0].Name, "net") || results.Case(rep.Groups[0].Case).Get("net") != "" {
		t.Errorf("groups %+v: want one, without the ignored field in its name or case", rep.Groups)
	}
	want := "BASE and NEW ran on different net (ignored: compared across it): BASE none, NEW latency=1ms"
	if !slices.Contains(rep.Warnings, want) {
		t.Errorf("warnings %q, want %q", rep.Warnings, want)
	}
	if !slices.Equal(rep.Ignore, []string{"net"}) {
		t.Errorf("report's Ignore %v", rep.Ignore)
	}

	// Runs that differ in an ignored field on one side pool into one group.
	both := withNet(synthFile(rng, 4, 1, "lockcore"), "latency=1ms")
	both.Runs = append(both.Runs, synthFile(rng, 4, 1, "lockcore").Runs...)
	rep = compareFiles(t, base, both, Options{Ignore: []string{"net"}})
	if len(rep.Groups) != 1 || rep.Groups[0].NewRuns != 8 {
		t.Errorf("NEW with and without --net: %d groups, NEW runs %d; want 1 group of 8", len(rep.Groups), rep.Groups[0].NewRuns)
	}

	if _, err := Compare([]*results.File{base}, []*results.File{new}, Options{Ignore: []string{"nett"}}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), `"nett" is not a case field`) {
		t.Errorf("--ignore nett: %v, want ErrBadInput naming the field", err)
	}
}

// TestWarningsNameWhatMovesNumbers checks that a NEW with another CPU placement, another
// lockbench build, other Redis persistence and other driver settings warns by name, and that
// the same files on both sides warn of nothing.
func TestWarningsNameWhatMovesNumbers(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	mk := func() *results.File {
		f := synthFile(rng, 3, 1, "lockcore")
		f.Placement = &results.Placement{Mode: "auto", ServerCPUs: "1", ClientCPUs: "0", GOMAXPROCS: 1}
		f.Deployment = &results.Deployment{Nodes: []results.DeploymentNode{{Addr: "127.0.0.1:1", Role: "master", MaxmemoryPolicy: "noeviction", RDBSave: ""}}}
		for i := range f.Runs {
			f.Runs[i].DriverSettings = map[string]string{"batch": "on", "client": "rueidis 1.0.79"}
		}
		return f
	}
	base, same := mk(), mk()
	rep := compareFiles(t, base, same, Options{AllowInconclusive: true})
	if len(rep.Warnings) != 0 {
		t.Fatalf("same settings on both sides warned: %q", rep.Warnings)
	}

	new := mk()
	new.Version = "v1.3.0"
	new.Placement = &results.Placement{Mode: "manual", ServerCPUs: "0", ClientCPUs: "0", GOMAXPROCS: 1, Shared: true}
	new.Deployment.Nodes[0].AOF, new.Deployment.Nodes[0].AOFFsync = true, "always"
	for i := range new.Runs {
		new.Runs[i].DriverSettings["batch"] = "off"
	}
	rep = compareFiles(t, base, new, Options{AllowInconclusive: true})
	for _, want := range []string{
		"different CPU placements: BASE ",
		"different lockbench builds: BASE test, NEW v1.3.0",
		"different Redis settings: BASE master: aof off",
		"NEW master: aof on fsync always",
		"driver setting batch differs: BASE on, NEW off",
	} {
		if !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
			t.Errorf("no warning containing %q in %q", want, rep.Warnings)
		}
	}
	if slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "setting client") }) {
		t.Errorf("a setting equal on both sides warned: %q", rep.Warnings)
	}
}
