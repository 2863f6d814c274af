package lockcore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/compose/docker/dockertest"
	"github.com/lockbench/lockbench/compose/redistest"
	"github.com/lockbench/lockbench/conn/conntest"
	"github.com/redis/rueidis"
)

// semantics is the suite every topology must pass. Each case cleans up after itself, so cases
// share one deployment (starting a cluster costs seconds).
var semantics = []struct {
	name string
	run  func(*testing.T, *testEnv)
}{
	{"MutualExclusion64Goroutines", testMutualExclusion64Goroutines},
	{"ReentrancyCounts", testReentrancyCounts},
	{"UnlockByNonOwner", testUnlockByNonOwner},
	{"LeaseExpiryFreesLock", testLeaseExpiryFreesLock},
	{"WatchdogRenewsWhileHeld", testWatchdogRenewsWhileHeldAndStopsAfterUnlock},
	{"WaiterWokenByPubSubBeforeTTL", testWaiterWokenByPubSubBeforeTTL},
	{"WaitersShareOneSubscription", testWaitersShareOneSubscriptionAndWakeOneByOne},
}

// familySemantics is the suite of the other lock kinds; it runs on single servers in each
// kind's own tests and on a cluster here, where every helper key and channel must stay in the
// lock's slot.
var familySemantics = []struct {
	name string
	run  func(*testing.T, *testEnv)
}{
	{"FairFIFO32Waiters", testFairFIFO32Waiters},
	{"FairReleaseWakesOnlyFirstWaiter", testFairReleaseWakesOnlyFirstWaiter},
	{"FairGiveUpLeavesQueue", testFairGiveUpLeavesQueue},
	{"FairStaleWaiterDoesNotBlock", testFairStaleWaiterDoesNotBlock},
	{"FairTryLockNoWaitNeverQueues", testFairTryLockNoWaitNeverQueues},
	{"FairUnlockByNonOwner", testFairUnlockByNonOwner},
	{"FairWatchdogRenewsWhileHeld", testFairWatchdogRenewsWhileHeld},
	{"FairMutualExclusionAndReentry", testFairMutualExclusionAndReentry},
	{"FencedTokensStrictlyIncrease", testFencedTokensStrictlyIncrease},
	{"FencedReentryAndLayout", testFencedReentryAndLayout},
	{"FencedUnlockByNonOwner", testFencedUnlockByNonOwner},
	{"FencedExcludesMutex", testFencedExcludesMutexAndWakesOnItsRelease},
}

// runSemantics runs the suite once per queue mode.
func runSemantics(t *testing.T, e *testEnv) {
	for _, mode := range queueModes {
		e.mode = mode
		for _, tc := range semantics {
			t.Run(mode.name+"/"+tc.name, func(t *testing.T) {
				// A failed test may leave its locks behind; every later test of the env
				// checks for leftover keys, so clear them and let one failure count once.
				t.Cleanup(func() {
					if t.Failed() {
						e.onMasters(t, "FLUSHALL")
					}
				})
				tc.run(t, e)
			})
		}
	}
	e.mode = queueMode{}
}

// On a Redis 7 cluster the suite runs with sharded pub/sub (the env checks every client chose
// it) and keys spread over all three masters.
func TestSemanticsOnCluster(t *testing.T) {
	t.Parallel() // its own servers (containers, a cluster): it overlaps the other long ones
	if testing.Short() {
		t.Skip("starts a 6-node cluster")
	}
	cl := redistest.NewCluster(t)
	e := newEnvFor(t, rueidis.ClientOption{InitAddress: cl.Addrs()}, cl.Masters(), true)
	runSemantics(t, e)
	for _, tc := range familySemantics {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, e) })
	}
	checkSynced(t, e)
}

// checkSynced checks that the suite just run on e, a deployment whose masters have replicas,
// ran in synced mode: every slot's master is known with its replica, and the masters served
// WAITs (the suite's calls and renewals went out with them).
func checkSynced(t *testing.T, e *testEnv) {
	t.Helper()
	c := e.client(t, Options{})
	for _, key := range []string{"a", "b", "c", "{x}y", "lock:42"} {
		if mode, n := c.Sync(key); mode != SyncWait || n < 1 {
			t.Errorf("Sync(%q) = %v, %d replicas; want wait with a replica", key, mode, n)
		}
	}
	if n := e.calls(t, "wait"); n == 0 {
		t.Error("the suite ran on a replicated deployment and no WAIT reached a master")
	}
}

// Through sentinels, lockcore finds the master and the suite runs with classic pub/sub.
func TestSemanticsOnSentinel(t *testing.T) {
	t.Parallel() // its own servers: it overlaps the other long ones
	if testing.Short() {
		t.Skip("starts a 6-process sentinel deployment")
	}
	s := redistest.NewSentinel(t)
	opt := rueidis.ClientOption{InitAddress: s.Addrs(), Sentinel: rueidis.SentinelOption{MasterSet: s.MasterName()}}
	master, err := s.MasterAddr(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvFor(t, opt, []string{master}, false)
	runSemantics(t, e)
	checkSynced(t, e)
}

// On topologies started with an ACL user and TLS only on every node (replication, the cluster
// bus and the sentinels included), the suite runs in the default queue mode: what differs is
// how clients connect, not the lock.
func TestSemanticsSecure(t *testing.T) {
	t.Parallel() // its own servers: it overlaps the other long ones
	if testing.Short() {
		t.Skip("starts a single server, a sentinel deployment and a cluster")
	}
	ca := conntest.NewCA(t, "lockcore test CA")
	cert, key := ca.Issue(t, conntest.Cert{})
	native := compose.NativeOptions{
		TLS:  &compose.NativeTLS{CertFile: cert, KeyFile: key, CAFile: ca.CertFile},
		Auth: &compose.NativeAuth{User: "bench", Password: "pw-secure-semantics"},
	}
	pem, err := os.ReadFile(ca.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	trust := &tls.Config{RootCAs: pool}
	secure := func(o rueidis.ClientOption) rueidis.ClientOption {
		o.Username, o.Password, o.TLSConfig = "bench", "pw-secure-semantics", trust
		return o
	}
	started := func(top compose.Topology, err error) {
		t.Helper()
		if errors.Is(err, compose.ErrRedisServerNotFound) && os.Getenv("CI") == "" {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { top.Close() })
	}
	run := func(t *testing.T, e *testEnv) {
		e.mode = queueModes[0]
		for _, tc := range semantics {
			t.Run(tc.name, func(t *testing.T) {
				t.Cleanup(func() {
					if t.Failed() {
						e.onMasters(t, "FLUSHALL")
					}
				})
				tc.run(t, e)
			})
		}
	}

	single, err := compose.StartSingle(t.Context(), native)
	started(single, err)
	t.Run("single", func(t *testing.T) {
		run(t, newEnvFor(t, secure(rueidis.ClientOption{InitAddress: single.Addrs()}), single.Addrs(), false))
	})

	sent, err := compose.StartSentinel(t.Context(), native, "")
	started(sent, err)
	t.Run("sentinel", func(t *testing.T) {
		master, err := sent.MasterAddr(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		opt := secure(rueidis.ClientOption{InitAddress: sent.Addrs(), Sentinel: rueidis.SentinelOption{MasterSet: sent.MasterName(),
			Username: "bench", Password: "pw-secure-semantics", TLSConfig: trust}})
		run(t, newEnvFor(t, opt, []string{master}, false))
	})

	cl, err := compose.StartCluster(t.Context(), native)
	started(cl, err)
	t.Run("cluster", func(t *testing.T) {
		run(t, newEnvFor(t, secure(rueidis.ClientOption{InitAddress: cl.Addrs()}), cl.Masters(), true))
	})
}

// The semantics suite on the docker provider's topologies, from the test image: what runs on
// native processes must run the same in containers (sentinel on private networks, cluster on
// the host's network).
//
// It is declared last in the package on purpose: it is lockcore's longest test (its cluster
// alone 80-140 s), and go test resumes the paused parallel tests about last-declared first.
// Declared in docker_test.go, its topologies started 76-86 s into the parallel phase and the
// cluster ran on alone at the end of the package (issue 37's CI time); declared here they
// start 40-53 s in (a parallel subtest asks for its slot only once its parent's body has
// returned, behind the tests already waiting). Three top-level tests, each started at once,
// did not end the package sooner (266 s against 264 s): by then the parallel phase is bound by
// the work its 4 slots carry, not by the order.
func TestSemanticsOnDocker(t *testing.T) {
	t.Parallel() // its own servers (containers, a cluster): it overlaps the other long ones
	if testing.Short() {
		t.Skip("starts Docker containers")
	}
	image := dockertest.Image(t)
	for _, kind := range []string{compose.KindSingle, compose.KindSentinel, compose.KindCluster} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel() // each kind has its own containers: the three overlap instead of adding up (34, 39 and 53 s one after another)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			topo, err := docker.Start(ctx, compose.Spec{Kind: kind}, docker.Options{Image: image})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := topo.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			var masters []string
			for _, n := range topo.Describe().Nodes {
				if n.Role == compose.RoleMaster {
					masters = append(masters, n.Addr)
				}
			}
			opt := rueidis.ClientOption{InitAddress: topo.Addrs()}
			if kind == compose.KindSentinel {
				opt.Sentinel = rueidis.SentinelOption{MasterSet: topo.Describe().MasterName}
			}
			e := newEnvFor(t, opt, masters, kind == compose.KindCluster)
			runSemantics(t, e)
			if kind == compose.KindCluster {
				for _, tc := range familySemantics {
					t.Run(tc.name, func(t *testing.T) { tc.run(t, e) })
				}
			}
		})
	}
}
