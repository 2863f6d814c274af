package lockcore

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/docker"
	"github.com/lockbench/lockbench/compose/docker/dockertest"
	"github.com/redis/rueidis"
)

// The semantics suite on the docker provider's topologies, from the test image: what runs on
// native processes must run the same in containers (sentinel on private networks, cluster on
// the host's network).
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
