package main

import (
	"context"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/drivers"
	"github.com/redis/rueidis"
)

// strandDriver is a lock that never releases: Lock writes the key with no TTL and Unlock leaves
// it. The post-run audit must find what it strands. It is registered as a negative control so
// that no "every driver" loop runs it; the test binary, re-run as lockbench, has it too.
type strandDriver struct{}

func init() { drivers.RegisterControl(strandDriver{}) }

func (strandDriver) Name() string        { return "strand-test" }
func (strandDriver) Kinds() drivers.Kind { return drivers.KindMutex }
func (strandDriver) Open(_ context.Context, cfg drivers.Config) (drivers.Locker, error) {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: cfg.Addrs, DisableCache: true})
	if err != nil {
		return nil, err
	}
	return strandLocker{c}, nil
}

type strandLocker struct{ c rueidis.Client }

func (l strandLocker) NewWorker() drivers.Worker          { return l }
func (strandLocker) Settings() map[string]string          { return nil }
func (l strandLocker) Close() error                       { l.c.Close(); return nil }
func (strandLocker) Unlock(context.Context, string) error { return nil }
func (l strandLocker) Lock(ctx context.Context, name string) error {
	return l.c.Do(ctx, l.c.B().Set().Key(name).Value("stranded").Build()).Error()
}

func TestAuditFailsARunThatStrandsKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	errb := &syncBuffer{}
	cmd := lockbench(t, errb, "run", "--driver", "naive,strand-test", "--concurrency", "2", "--keys", "3",
		"--duration", "300ms", "--warmup", "0s", "--out", dir)
	code, _ := finish(t, cmd, errb)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\n%s", code, exitFailure, errb)
	}
	f := readResult(t, dir)
	if len(f.Runs) != 2 {
		t.Fatalf("%d runs", len(f.Runs))
	}
	for _, r := range f.Runs {
		if r.Audit == nil || r.Audit.Masters != 1 {
			t.Fatalf("%s: audit %+v", r.Driver, r.Audit)
		}
		switch r.Driver {
		case "naive":
			if r.Audit.Leftovers != 0 || r.Errors != 0 {
				t.Errorf("naive: audit %+v, errors %v", r.Audit, r.ErrorsByKind)
			}
		case "strand-test":
			if r.Audit.Leftovers != 3 || r.ErrorsByKind["leftover_keys"] != 3 || len(r.Audit.Keys) != 3 || r.Audit.Keys[0].TTLMS != -1 {
				t.Errorf("strand-test: audit %+v, errors %v; want the 3 keys, without TTL", r.Audit, r.ErrorsByKind)
			}
		}
	}
	if !strings.Contains(errb.String(), "leftover key after strand-test: lockbench:") {
		t.Errorf("stderr does not name the leftover keys:\n%s", errb)
	}
}
