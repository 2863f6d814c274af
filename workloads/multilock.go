package workloads

import (
	"context"
	"slices"
	"time"

	"github.com/lockbench/lockbench/drivers"
	"github.com/lockbench/lockbench/results"
)

// Multilock is the multilock workload: each cycle takes Config.Fanout distinct keys at once, all
// or nothing, holds them for Config.Hold and releases them. Keys are drawn as contention draws
// them (uniform or zipf), so workers' sets overlap; on a cluster the names hash to different
// slots, so a set spans shards. A per-key Checker sees every key of the set. One grant of a set
// is one acquisition. It needs drivers.KindMulti and is safe for concurrent use.
type Multilock struct{}

func init() { register(Multilock{}) }

// Name implements Workload.
func (Multilock) Name() string { return "multilock" }

// Needs implements Workload.
func (Multilock) Needs() drivers.Kind { return drivers.KindMulti }

// Start implements Workload.
func (Multilock) Start(cfg *Config) Instance {
	return &multilockRun{cfg: cfg, names: keyNames(cfg.KeyPrefix, cfg.Keys), checker: cfg.checker()}
}

type multilockRun struct {
	cfg     *Config
	names   []string
	checker *Checker
}

func (m *multilockRun) Violations() int64 { return m.checker.Violations() }

func (m *multilockRun) NewCycler(id int, w drivers.Worker, release context.Context) Cycler {
	mw, ok := w.(drivers.MultiWorker)
	if !ok {
		return lacking(drivers.KindMulti)
	}
	return &multilockCycler{
		m: m, w: mw, keys: newKeyChooser(m.cfg, id), cycleBase: newCycleBase(m.cfg, id, release),
		set: make([]int, 0, m.cfg.Fanout), setNames: make([]string, 0, m.cfg.Fanout),
	}
}

type multilockCycler struct {
	m        *multilockRun
	w        drivers.MultiWorker
	keys     *keyChooser
	set      []int    // this cycle's keys
	setNames []string // and their names
	cycleBase
}

// pick draws the cycle's Fanout distinct keys. A skewed distribution can keep drawing the same
// few keys, so after a bounded number of draws the set is filled up with the next keys not in it
// from a random start.
func (cy *multilockCycler) pick() {
	n, want := cy.m.cfg.Keys, cy.m.cfg.Fanout
	cy.set = cy.set[:0]
	for tries := 16 * want; len(cy.set) < want && tries > 0; tries-- {
		if k := cy.keys.next(); !slices.Contains(cy.set, k) {
			cy.set = append(cy.set, k)
		}
	}
	for k := cy.keys.rng.IntN(n); len(cy.set) < want; k = (k + 1) % n {
		if !slices.Contains(cy.set, k) {
			cy.set = append(cy.set, k)
		}
	}
	cy.setNames = cy.setNames[:0]
	for _, k := range cy.set {
		cy.setNames = append(cy.setNames, cy.m.names[k])
	}
}

func (cy *multilockCycler) Cycle(ctx context.Context, rec *results.Recorder) error {
	cy.pick()
	start := time.Now()
	if err := cy.w.LockMulti(ctx, cy.setNames); err != nil {
		return cy.acquireFailed(ctx, rec, err)
	}
	acquired := time.Now()
	for _, k := range cy.set {
		cy.m.checker.Enter(k, cy.worker)
	}
	cy.holdLock(ctx, acquired)
	for _, k := range cy.set {
		cy.m.checker.Exit(k, cy.worker)
	}
	relStart := time.Now()
	err := cy.w.UnlockMulti(cy.release, cy.setNames)
	cy.released(ctx, rec, err, start, acquired, relStart)
	return nil
}
