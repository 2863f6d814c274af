package compare

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
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
