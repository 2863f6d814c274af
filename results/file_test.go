package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testFile(t testing.TB) *File {
	t.Helper()
	f := NewFile("v0.0.0-test", []string{"lockbench", "run"})
	f.CreatedAt = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	r := Run{Driver: "lockcore", Workload: "contention", Topology: "single", Concurrency: 8, Keys: 10, Complete: true}
	if err := r.Fill(linearStats(5000), time.Second); err != nil {
		t.Fatal(err)
	}
	f.Runs = append(f.Runs, r)
	return f
}

func TestRoundTrip(t *testing.T) {
	s := linearStats(5000)
	f := NewFile("v1", nil)
	var r Run
	if err := r.Fill(s, time.Second); err != nil {
		t.Fatal(err)
	}
	r.Violations, r.FencingViolations, r.MaxConcurrentReaders = 5, 3, 7
	f.Runs = append(f.Runs, r)

	path, err := WriteFile(t.TempDir(), f)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Schema != SchemaVersion || got.Tool != "lockbench" || !got.Complete || len(got.Runs) != 1 {
		t.Fatalf("read back %+v", got)
	}
	acquire, release, cycle, err := got.Runs[0].Histograms.Decode()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want interface {
			TotalCount() int64
			ValueAtQuantile(float64) int64
		}
	}{{"acquire", acquire, s.Acquire}, {"release", release, s.Release}, {"cycle", cycle, s.Cycle}} {
		if c.got.TotalCount() != c.want.TotalCount() || c.got.ValueAtQuantile(99) != c.want.ValueAtQuantile(99) {
			t.Errorf("%s: count %d p99 %d, want %d %d", c.name, c.got.TotalCount(), c.got.ValueAtQuantile(99), c.want.TotalCount(), c.want.ValueAtQuantile(99))
		}
	}
	if got.Runs[0].AcquireLatencyUS != r.AcquireLatencyUS {
		t.Errorf("percentiles %+v, want %+v", got.Runs[0].AcquireLatencyUS, r.AcquireLatencyUS)
	}
	if g := got.Runs[0]; g.Violations != 5 || g.FencingViolations != 3 || g.MaxConcurrentReaders != 7 {
		t.Errorf("safety read back as violations %d, fencing %d, max readers %d; want 5, 3, 7", g.Violations, g.FencingViolations, g.MaxConcurrentReaders)
	}
}

// TestSafetyFieldsJSON pins the JSON names of the safety fields, and that runs which have none of
// them (no fenced lock, no reads) leave them out, so files stay what they were before.
func TestSafetyFieldsJSON(t *testing.T) {
	b, err := json.Marshal(Run{Violations: 2, FencingViolations: 1, MaxConcurrentReaders: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"violations":2`, `"fencing_violations":1`, `"max_concurrent_readers":4`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
	b, err = json.Marshal(Run{})
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"fencing_violations", "max_concurrent_readers"} {
		if bytes.Contains(b, []byte(absent)) {
			t.Errorf("zero run has %s: %s", absent, b)
		}
	}
}

func TestWriteFileNames(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	f := testFile(t)
	var paths []string
	for range 3 {
		p, err := WriteFile(dir, f)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Base(p))
	}
	want := []string{
		"lockbench-20250304T050607Z-contention.json",
		"lockbench-20250304T050607Z-contention-1.json",
		"lockbench-20250304T050607Z-contention-2.json",
	}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("names %v, want %v", paths, want)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("%d files in dir, want 3 (temp file left behind?)", len(entries))
	}
	if fi, err := os.Stat(filepath.Join(dir, want[0])); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("stat: %v, %v", fi, err)
	}
}

func TestFileBase(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		runs []Run
		want string
	}{
		{nil, "lockbench-20250304T040607Z-run"},
		{[]Run{{Workload: ""}}, "lockbench-20250304T040607Z-run"},
		{[]Run{{Workload: "mix 80/20"}, {Workload: "other"}}, "lockbench-20250304T040607Z-mix_80_20"},
	}
	for _, tt := range tests {
		if got := fileBase(&File{CreatedAt: at, Runs: tt.runs}); got != tt.want {
			t.Errorf("fileBase(%v) = %q, want %q", tt.runs, got, tt.want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	valid, err := json.Marshal(testFile(t))
	if err != nil {
		t.Fatal(err)
	}
	replace := func(old, new string) string {
		return strings.Replace(string(valid), old, new, 1)
	}
	tests := []struct {
		name, input, wantMsg string
	}{
		{"empty", "", "invalid JSON"},
		{"not JSON", "lockbench", "invalid JSON"},
		{"truncated", string(valid[:len(valid)/2]), "invalid JSON"},
		{"array", "[]", "invalid JSON"},
		{"null", "null", "missing schema"},
		{"no schema", `{"tool":"lockbench"}`, "missing schema"},
		{"newer schema", `{"schema":2,"runs":{}}`, "schema 2"},
		{"wrong type", replace(`"concurrency":8`, `"concurrency":"8"`), "concurrency"},
		{"bad base64", replace(`"acquire":"`, `"acquire":"!`), "runs[0].histograms.acquire"},
		{"not a histogram", replace(`"cycle":"`, `"cycle":"QUJD`), "runs[0].histograms.cycle"},
	}
	for _, tt := range tests {
		_, err := Decode(strings.NewReader(tt.input))
		if !errors.Is(err, ErrBadResult) || !strings.Contains(err.Error(), tt.wantMsg) {
			t.Errorf("%s: err = %v, want ErrBadResult mentioning %q", tt.name, err, tt.wantMsg)
		}
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadFile(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrBadResult) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist only", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema":0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(bad); !errors.Is(err, ErrBadResult) || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad file: err = %v, want ErrBadResult naming the file", err)
	}
}

func FuzzDecode(f *testing.F) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(testFile(f)); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"schema":1,"runs":[{"histograms":{"acquire":"QUJD"}}]}`))
	f.Add([]byte(`{"schema":1}`))
	f.Add([]byte(`null`))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Decode(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrBadResult) {
				t.Fatalf("error does not wrap ErrBadResult: %v", err)
			}
			return
		}
		if file.Schema != SchemaVersion {
			t.Fatalf("accepted schema %d", file.Schema)
		}
	})
}
