package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/results"
)

// TestLabelFlag: run and sweep take --label and refuse one a result file cannot carry (exit
// 2, before anything runs); a worker's file is a share of a run and takes none.
func TestLabelFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		err  string // "" for none
	}{
		{[]string{"run", "--label", "v1.3"}, ""},
		{[]string{"sweep", "--label", "BASE", "--slo", "p99=2ms"}, ""},
		{[]string{"run", "--label", "a b"}, `--label "a b": want 1 to`},
		{[]string{"sweep", "--label", "x=y"}, `--label "x=y"`},
		{[]string{"worker", "--addr", "127.0.0.1:6379", "--driver", "lockcore", "--label", "v1"}, "unknown flag: --label"},
	} {
		err := parseOnly(tc.args)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.err)
		}
	}
}

// TestRunLabelEndToEnd: two short runs labelled BASE-x and NEW-y write their labels into their
// result files; compare names them, and report, given the files alone, draws them under them.
func TestRunLabelEndToEnd(t *testing.T) {
	t.Parallel()
	srv := redistest.NewServer(t)
	dir := t.TempDir()
	paths := map[string]string{}
	for i, label := range []string{"BASE-x", "NEW-y"} {
		sub := filepath.Join(dir, string(rune('a'+i))) // not the label: the page must get it from the file
		var out, errb bytes.Buffer
		code := dispatch([]string{"run", "--addr", srv.Addr(), "--driver", "naive", "--concurrency", "2", "--keys", "10",
			"--duration", "200ms", "--warmup", "0s", "--label", label, "--out", sub}, &out, &errb)
		if code != exitOK {
			t.Fatalf("run --label %s: exit %d\n%s%s", label, code, out.String(), errb.String())
		}
		files, _ := filepath.Glob(filepath.Join(sub, "*.json"))
		if len(files) != 1 {
			t.Fatalf("run --label %s wrote %q, want one result file", label, files)
		}
		f, err := results.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		if f.Label != label {
			t.Errorf("run --label %s: the file's label is %q", label, f.Label)
		}
		paths[label] = files[0]
	}

	var out, errb bytes.Buffer
	dispatch([]string{"compare", "--allow-inconclusive", paths["BASE-x"], paths["NEW-y"]}, &out, &errb) // 1 run a side: no verdict to check
	if !strings.Contains(out.String(), "labels: BASE BASE-x, NEW NEW-y") {
		t.Errorf("compare output lacks the labels:\n%s%s", out.String(), errb.String())
	}

	rep := filepath.Join(dir, "report")
	out.Reset()
	if code := dispatch([]string{"report", "-o", rep, paths["BASE-x"], paths["NEW-y"]}, &out, &errb); code != exitOK {
		t.Fatalf("report: exit %d\n%s", code, errb.String())
	}
	page, err := os.ReadFile(filepath.Join(rep, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"BASE-x", "NEW-y"} {
		if !bytes.Contains(page, []byte(label)) {
			t.Errorf("the report of the two files does not name %s", label)
		}
	}
}
