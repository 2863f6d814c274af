package lockcore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// countingClient is a real rueidis client that counts how commands leave it, to check how
// lockcore batches; Redis semantics are untouched.
type countingClient struct {
	rueidis.Client
	do, doMulti, multiCmds atomic.Int64
}

func (c *countingClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.do.Add(1)
	return c.Client.Do(ctx, cmd)
}

func (c *countingClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	c.doMulti.Add(1)
	c.multiCmds.Add(int64(len(cmds)))
	return c.Client.DoMulti(ctx, cmds...)
}

func TestRenewalsOfAllHeldLocksGoOutBatched(t *testing.T) {
	e := newEnv(t)
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{e.addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rdb.Close)
	cc := &countingClient{Client: rdb}
	// SyncOff: in synced mode the Client asks the server for its replicas once a second, a
	// single command of its own that has nothing to do with renewals.
	c := e.client(t, Options{Client: cc, LeaseTime: 600 * time.Millisecond, RenewInterval: 200 * time.Millisecond, Sync: SyncOff})
	ctx := ctxT(t, 10*time.Second)
	const locks = 40
	owner := c.NewOwner()
	taking := time.Now()
	for i := range locks {
		if err := c.Mutex(fmt.Sprintf("batch:%d", i)).Lock(ctx, owner); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(taking)
	doBefore := cc.do.Load()
	time.Sleep(time.Second) // about five renew intervals
	if got := cc.do.Load() - doBefore; got != 0 {
		t.Fatalf("%d single commands while only renewing: renewals are not batched", got)
	}
	batches, cmds, renewals := cc.doMulti.Load(), cc.multiCmds.Load(), c.renewalCount()
	if batches == 0 || renewals < 3*locks {
		t.Fatalf("%d pipelines carrying %d renewals for %d locks over ~5 intervals", batches, renewals, locks)
	}
	// Locks taken on either side of a watchdog tick may renew in alternate ticks, so allow two
	// pipelines per round, and one more for each renew interval the 40 Locks took (a loaded CI
	// machine spread them over several); one timer per lock would mean one pipeline per renewal.
	// On one server a tick's renewals are one batch script call (NOSCRIPT answers add one EVAL).
	perRound := 2 + int64(took/(200*time.Millisecond))
	if renewals/batches < locks/perRound {
		t.Fatalf("%d renewals in %d pipelines, the locks taken in %v: want the held locks renewed together (at most %d pipelines a round)", renewals, batches, took, perRound)
	}
	if cmds > 2*batches {
		t.Fatalf("%d script calls in %d pipelines: want one batch script call per tick", cmds, batches)
	}
	for i := range locks {
		if err := c.Mutex(fmt.Sprintf("batch:%d", i)).Unlock(ctx, owner); err != nil {
			t.Fatal(err)
		}
	}
	e.assertNoKeys(t)
}

// Concurrent callers must share connections (rueidis auto-pipelining), not hold one each, and no
// lockcore lock may serialise them around I/O: 64 goroutines run on a handful of connections.
func TestConcurrentCallersShareConnections(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{})
	ctx := ctxT(t, 30*time.Second)
	var wg sync.WaitGroup
	var maxClients atomic.Int64
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if n := e.connectedClients(t); n > maxClients.Load() {
				maxClients.Store(n)
			}
		}
	}()
	for w := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := c.NewOwner()
			for i := range 300 {
				m := c.Mutex(fmt.Sprintf("pipe:%d:%d", w, i))
				if err := m.Lock(ctx, o); err != nil {
					t.Error(err)
					return
				}
				if err := m.Unlock(ctx, o); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	// The inspection client, lockcore's pipelined connections (rueidis: 2 per 2 cores, up to 4
	// by default) and slack; 64 goroutines holding a connection each would show 65.
	if n := maxClients.Load(); n > 8 {
		t.Fatalf("%d connections for 64 concurrent callers: commands are not pipelined", n)
	}
	e.assertNoKeys(t)
}

func (e *testEnv) connectedClients(t testing.TB) int64 {
	info, err := e.do(t, "INFO", "clients").ToString()
	if err != nil {
		t.Error(err)
		return 0
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_clients:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
