package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenReport is a fixed comparison with every kind of row: regressions, inconclusive rows,
// identical counts, an unmatched group and a warning.
func goldenReport(t *testing.T) *Report {
	rng := rand.New(rand.NewPCG(1, 2))
	base, new := synthFile(rng, 10, 1, "lockcore", "naive", "redsync"), synthFile(rng, 10, 1.25, "lockcore", "naive")
	new.RedisVersion = "7.2.0"
	return compareFiles(t, base, new, Options{})
}

func TestGolden(t *testing.T) {
	rep := goldenReport(t)
	for _, format := range []string{"text", "markdown"} {
		var buf bytes.Buffer
		if err := rep.WriteFormat(&buf, format); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "report."+format+".golden")
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s report differs from %s (go test -update rewrites it):\n%s", format, path, buf.String())
		}
	}
}

// TestJSON: the JSON form decodes and carries the verdicts; infinite intervals and deltas are
// left out rather than breaking the encoding.
func TestJSON(t *testing.T) {
	rep := goldenReport(t)
	rng := rand.New(rand.NewPCG(9, 9))
	few := compareFiles(t, synthFile(rng, 2, 1, "lockcore"), synthFile(rng, 2, 1, "lockcore"), Options{}) // ±∞ intervals
	for _, r := range []*Report{rep, few} {
		var buf bytes.Buffer
		if err := r.WriteFormat(&buf, "json"); err != nil {
			t.Fatal(err)
		}
		var back Report
		if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
			t.Fatalf("JSON report does not decode: %v\n%s", err, buf.String())
		}
		if back.Verdict != r.Verdict || len(back.Groups) != len(r.Groups) || back.Regressions != r.Regressions {
			t.Errorf("decoded verdict %s groups %d regressions %d; want %s %d %d", back.Verdict, len(back.Groups), back.Regressions, r.Verdict, len(r.Groups), r.Regressions)
		}
	}
	if err := rep.WriteFormat(new(bytes.Buffer), "yaml"); !errors.Is(err, ErrBadInput) {
		t.Errorf("format yaml: %v, want ErrBadInput", err)
	}
}

// TestFewRunsShowTheirRange checks what a cell says at fewer than 6 runs a side, where a 95%
// interval of the median is unbounded: the runs' min–max, not "±∞"; and that the p column is
// the one-sided p the verdict rests on.
func TestFewRunsShowTheirRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	rep := compareFiles(t, synthFile(rng, 4, 1, "lockcore"), synthFile(rng, 4, 1, "lockcore"), Options{AllowInconclusive: true})
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "±∞") {
		t.Errorf("an unbounded interval printed as ±∞:\n%s", out)
	}
	row := rowOf(t, rep, "throughput")
	if row.Base.Min == nil || row.Base.Lo != nil {
		t.Fatalf("base summary %+v: want a range and no interval at n=4", row.Base)
	}
	want := fmt.Sprintf("[%s–%s]", row.metric.Format(*row.Base.Min), row.metric.Format(*row.Base.Max))
	if !strings.Contains(out, want) || !strings.Contains(out, "p(worse)") {
		t.Errorf("output lacks the base range %s or the p(worse) column:\n%s", want, out)
	}
	if row.PWorse == nil || row.pCell() != strconv.FormatFloat(*row.PWorse, 'g', 2, 64) {
		t.Errorf("p cell %q, want the one-sided p(worse) %v", row.pCell(), row.PWorse)
	}
}

// TestDocsQuoteTheGoldenRow checks that README.md and docs/compare.md, which quote a row of the
// golden report as what a real 20% slowdown reads like, quote it as the code prints it today.
func TestDocsQuoteTheGoldenRow(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "report.text.golden"))
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for line := range strings.SplitSeq(string(golden), "\n") {
		if strings.HasPrefix(line, "acq/s ") {
			row = line
			break
		}
	}
	if row == "" {
		t.Fatal("no acq/s row in the golden report")
	}
	for _, doc := range []string{filepath.Join("..", "README.md"), filepath.Join("..", "docs", "compare.md")} {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), "\n"+row+"\n") {
			t.Errorf("%s does not quote the golden acq/s row as printed today:\n%s", doc, row)
		}
	}
}
