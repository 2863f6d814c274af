package audit_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/lockbench/lockbench/audit"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/keyspace"
	"github.com/lockbench/lockbench/results"
	"github.com/redis/rueidis"
)

// ours is the scope of an attached deployment's audit for the default prefix.
var ours = func() audit.Scope {
	ks := keyspace.New("lockbench:")
	return audit.Scope{Globs: ks.Globs(), Match: ks.Owns}
}()

func master(t *testing.T) audit.Master {
	t.Helper()
	srv := redistest.NewServer(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: srv.Addrs(), ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return audit.Master{Addr: srv.Addrs()[0], Client: c}
}

func do(t *testing.T, c rueidis.Client, cmd rueidis.Completed) {
	t.Helper()
	if err := c.Do(context.Background(), cmd).Error(); err != nil {
		t.Fatal(err)
	}
}

func TestScanFindsStrandedKeys(t *testing.T) {
	m := master(t)
	c := m.Client
	ctx := context.Background()
	if a, err := audit.Scan(ctx, []audit.Master{m}, ours); err != nil || a.Leftovers != 0 || a.FencingCounters != 0 {
		t.Fatalf("empty server: %+v, %v", a, err)
	}
	// A stranded lock without TTL, a fair-lock queue left behind, a lock whose lease still runs,
	// a fencing counter (kept on purpose) and a key that is not lockbench's.
	do(t, c, c.B().Hset().Key("lockbench:7").FieldValue().FieldValue("owner:1", "1").Build())
	do(t, c, c.B().Rpush().Key("redisson_lock_queue:{lockbench:3}").Element("owner:2").Build())
	do(t, c, c.B().Set().Key("lockbench:9").Value("tok").ExSeconds(60).Build())
	do(t, c, c.B().Incr().Key("redisson_lock_token:{lockbench:1}").Build())
	do(t, c, c.B().Set().Key("yours").Value("x").Build())
	// Someone else's keys that contain the prefix, or pass a glob of lockbench's shapes.
	for _, k := range []string{"app:lockbench:7", "x{lockbench:1}", "mylockbench", "lockbench:cfg", "redisson_lock_queue:{other}", "{lockbench:1}:cfg"} {
		do(t, c, c.B().Set().Key(k).Value("x").Build())
	}

	a, err := audit.Scan(ctx, []audit.Master{m}, ours)
	if err != nil {
		t.Fatal(err)
	}
	if a.Leftovers != 3 || a.FencingCounters != 1 || len(a.Keys) != 3 || a.Masters != 1 {
		t.Fatalf("audit %+v: want 3 leftovers listed and 1 fencing counter", a)
	}
	byKey := map[string]results.LeftoverKey{}
	for _, k := range a.Keys {
		byKey[k.Key] = k
	}
	if k := byKey["lockbench:7"]; k.Type != "hash" || k.TTLMS != -1 || k.Node != m.Addr {
		t.Fatalf("stranded lock reported as %+v", k)
	}
	if k := byKey["lockbench:9"]; k.Type != "string" || k.TTLMS <= 0 {
		t.Fatalf("lock with a lease reported as %+v", k)
	}
	if _, ok := byKey["redisson_lock_queue:{lockbench:3}"]; !ok {
		t.Fatalf("queue key not listed: %+v", a.Keys)
	}
	// Everything, as on a deployment lockbench started: the keys that are not lockbench's too.
	if a, err := audit.Scan(ctx, []audit.Master{m}, audit.All); err != nil || a.Leftovers != 10 {
		t.Fatalf("scan of *: %+v, %v", a, err)
	}
}

func TestScanListsAtMostMaxAuditKeys(t *testing.T) {
	m := master(t)
	c := m.Client
	for i := range results.MaxAuditKeys + 5 {
		do(t, c, c.B().Set().Key("lockbench:"+strconv.Itoa(i)).Value("x").Build())
	}
	a, err := audit.Scan(context.Background(), []audit.Master{m}, ours)
	if err != nil {
		t.Fatal(err)
	}
	if a.Leftovers != results.MaxAuditKeys+5 || len(a.Keys) != results.MaxAuditKeys {
		t.Fatalf("%d leftovers, %d listed", a.Leftovers, len(a.Keys))
	}
}

func TestScanReportsAFailedMaster(t *testing.T) {
	m := master(t)
	m.Client.Close()
	a, err := audit.Scan(context.Background(), []audit.Master{m}, audit.All)
	if err == nil || a.Error == "" {
		t.Fatalf("scan of a closed client: %+v, %v", a, err)
	}
}

// TestScanCountsUnlockLatchesApart checks that Redisson's unlock latches with a TTL (left to
// expire by Redisson 3.52) are counted apart, and a latch without one is a leftover.
func TestScanCountsUnlockLatchesApart(t *testing.T) {
	m := master(t)
	c := m.Client
	ctx := context.Background()
	do(t, c, c.B().Set().Key("redisson_unlock_latch:{lockbench:1}:ab12").Value("1").PxMilliseconds(60000).Build())
	do(t, c, c.B().Set().Key("redisson_unlock_latch:{lockbench:2}:cd34").Value("0").PxMilliseconds(60000).Build())
	do(t, c, c.B().Set().Key("redisson_unlock_latch:{lockbench:3}:ef56").Value("1").Build())
	a, err := audit.Scan(ctx, []audit.Master{m}, ours)
	if err != nil {
		t.Fatal(err)
	}
	if a.UnlockLatches != 2 || a.Leftovers != 1 || len(a.Keys) != 1 || a.Keys[0].Key != "redisson_unlock_latch:{lockbench:3}:ef56" || a.Keys[0].TTLMS != -1 {
		t.Fatalf("audit %+v: want 2 unlock latches and the one without TTL a leftover", a)
	}
}
