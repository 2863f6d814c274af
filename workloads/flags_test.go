package workloads

import (
	"testing"

	"github.com/spf13/pflag"
)

// TestConfigRegister: run's workload flags set the Config, each with this package's default.
func TestConfigRegister(t *testing.T) {
	t.Parallel()
	var c Config
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	c.Register(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	want := Config{Concurrency: DefaultConcurrency, Keys: DefaultKeys, KeyDist: DefaultKeyDist, ZipfS: DefaultZipfS,
		ReadRatio: DefaultReadRatio, Fanout: DefaultFanout, Depth: DefaultDepth, Duration: DefaultDuration,
		Warmup: DefaultWarmup, Seed: DefaultSeed, KeyPrefix: DefaultKeyPrefix}
	if c != want {
		t.Errorf("defaults:\n%+v\nwant\n%+v", c, want)
	}
	if err := fs.Parse([]string{"--read-ratio", "0", "--keys", "7", "--rate", "500", "--arrival", "poisson", "--key-prefix", "bench:"}); err != nil {
		t.Fatal(err)
	}
	if c.ReadRatio != 0 || c.Keys != 7 || c.Rate != 500 || c.Arrival != "poisson" || c.KeyPrefix != "bench:" || !fs.Changed("read-ratio") {
		t.Errorf("parsed: %+v", c)
	}
}
