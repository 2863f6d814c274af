package workloads

import (
	"math/rand/v2"
	"strconv"
)

// keyChooser picks key indexes for one worker. Not safe for concurrent use.
type keyChooser struct {
	rng  *rand.Rand
	n    int
	zipf *rand.Zipf
}

// newKeyChooser returns worker's chooser; the same seed and worker give the same sequence.
func newKeyChooser(cfg *Config, worker int) *keyChooser {
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(worker)))
	k := &keyChooser{rng: rng, n: cfg.Keys}
	if cfg.KeyDist == DistZipf && cfg.Keys > 1 {
		k.zipf = rand.NewZipf(rng, cfg.ZipfS, 1, uint64(cfg.Keys-1))
	}
	return k
}

// next returns a key index in [0, Keys).
func (k *keyChooser) next() int {
	if k.zipf != nil {
		return int(k.zipf.Uint64())
	}
	return k.rng.IntN(k.n)
}

// keyNames builds every lock name once, so the hot loop does not format strings.
func keyNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i)
	}
	return names
}
