package report

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/lockbench/lockbench/results"
)

// FuzzBuild feeds Build whatever results.Decode accepts, as lockbench report does: a file
// that decodes is a file the report draws, without a panic and without an error.
func FuzzBuild(f *testing.F) {
	for _, file := range []*results.File{incompleteFile(f), sweepFile(f, results.SweepSLO{Name: "p999", Percentile: 99.9, LimitUS: 900})} {
		data, err := json.Marshal(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	if data, err := os.ReadFile("../cmd/lockbench/testdata/old-run.json"); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"schema":1,"complete":true,"runs":[{"driver":"a","acquisitions":3,"throughput_per_s":-1,"acquire_latency_us":{"p50":-4,"p99":0},"round":7,"timeline":{"points":[{"throughput_per_s":-3,"acquire_p99_us":-1}]}}]}`))
	f.Add([]byte(`{"schema":1,"runs":[{"driver":"a","acquisitions":1,"throughput_per_s":5,"acquire_latency_us":{"p50":1,"p99":1}}],"sweep":{"mode":"rate","loads":[1e308,1],"slo":{"name":"p1","percentile":1e-300,"limit_us":1e300},"drivers":[{"driver":"a","knee_step":2,"steps":[{"step":1,"load":1e308,"run":0,"throughput_per_s":1e308,"latency_us":-5},{"step":2,"run":-1,"verdict":"failed"}]},{"driver":"b"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := results.Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		r, err := Build([]Source{{Name: "fuzz.json", File: file}}, Options{Width: 200, Height: 200})
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		if err := r.WriteHTML(&bytes.Buffer{}); err != nil {
			t.Fatalf("WriteHTML: %v", err)
		}
	})
}
