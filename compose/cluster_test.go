//go:build unix

package compose

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

func TestCluster(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	c, err := StartCluster(context.Background(), NativeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })

	if c.Kind() != KindCluster {
		t.Errorf("Kind() = %q", c.Kind())
	}
	addrs := c.Addrs()
	masters := c.Masters()
	if len(addrs) != ClusterMasters+ClusterReplicas || len(masters) != ClusterMasters || !slices.Equal(addrs[:ClusterMasters], masters) {
		t.Fatalf("Addrs() = %q, Masters() = %q; want %d masters first, then %d replicas", addrs, masters, ClusterMasters, ClusterReplicas)
	}
	d := c.Describe()
	if d.Kind != KindCluster || !slices.Equal(nodesWithRole(d, RoleMaster), masters) ||
		!slices.Equal(nodesWithRole(d, RoleReplica), addrs[ClusterMasters:]) {
		t.Errorf("Describe() = %+v, want masters %q then replicas %q", d, masters, addrs[ClusterMasters:])
	}
	pids := allPids(t, c.Pid, addrs)

	// Every node, asked itself: healthy, the role Describe says, the documented settings.
	for i, a := range addrs {
		ci := parseInfo(command(t, a, "CLUSTER INFO")[0])
		if ci["cluster_state"] != "ok" || ci["cluster_slots_assigned"] != "16384" || ci["cluster_known_nodes"] != "6" || ci["cluster_size"] != "3" {
			t.Errorf("%s CLUSTER INFO: state %s, slots %s, nodes %s, size %s", a, ci["cluster_state"],
				ci["cluster_slots_assigned"], ci["cluster_known_nodes"], ci["cluster_size"])
		}
		want := "master"
		if i >= ClusterMasters {
			want = "slave"
		}
		if got := infoField(t, a, "replication", "role"); got != want {
			t.Errorf("%s role:%s, want %s", a, got, want)
		}
		if got := command(t, a, "CONFIG GET cluster-node-timeout"); len(got) != 2 || got[1] != "2000" {
			t.Errorf("%s cluster-node-timeout = %q, want 2000", a, got)
		}
		// Each replica replicates the master started with it.
		if i >= ClusterMasters {
			m := addrs[i-ClusterMasters]
			if got := infoField(t, a, "replication", "master_port"); !strings.HasSuffix(m, ":"+got) {
				t.Errorf("replica %s replicates port %s, want %s", a, got, m)
			}
		}
		// The cluster config file lives in the node's own dir.
		if _, err := os.Stat(c.all()[i].proc.dir + "/" + clusterConfName); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}

	// A cluster client spreads keys over every master.
	client, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: addrs[:1], DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const keys = 60
	for i := range keys {
		k := "key:" + strconv.Itoa(i)
		if err := client.Do(ctx, client.B().Set().Key(k).Value(k).Build()).Error(); err != nil {
			t.Fatalf("SET %s: %v", k, err)
		}
	}
	total := 0
	for _, m := range masters {
		n, _ := strconv.Atoi(command(t, m, "DBSIZE")[0])
		if n == 0 {
			t.Errorf("master %s holds no keys", m)
		}
		total += n
	}
	if total != keys {
		t.Errorf("masters hold %d keys, want %d", total, keys)
	}

	t.Run("attach", func(t *testing.T) { testAttachCluster(t, c) })

	t.Run("failover", func(t *testing.T) {
		victim, heir := masters[0], addrs[ClusterMasters]
		if err := c.Kill(victim); err != nil {
			t.Fatal(err)
		}
		// The replica takes over once the master has been unreachable for the node timeout
		// and the other masters have voted.
		// Masters and Describe each take the first node that answers, and the nodes learn of the
		// fail-over by gossip, one after another: a node that has not heard yet still lists
		// the victim as a master. So both are polled until they agree, up to the deadline.
		deadline := time.Now().Add(ClusterNodeTimeout + 20*time.Second)
		for {
			got := c.Masters()
			promoted := slices.Contains(got, heir) && !slices.Contains(got, victim) && len(got) == ClusterMasters
			d := c.Describe()
			demoted := !slices.Contains(nodesWithRole(d, RoleMaster), victim) && slices.Contains(nodesWithRole(d, RoleReplica), victim)
			if promoted && demoted {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after killing %s: Masters() = %q, want %s promoted; Describe() = %+v, want %s (failed, no slots) listed as a replica",
					victim, got, heir, d, victim)
			}
			time.Sleep(100 * time.Millisecond)
		}
		for {
			err := client.Do(ctx, client.B().Get().Key("key:0").Build()).Error()
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("GET after failover: %v", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	client.Close()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, pid := range pids {
		assertGone(t, pid)
	}
	for _, n := range c.all() {
		if _, err := os.Stat(n.proc.dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("temp dir %s still there after Close (stat: %v)", n.proc.dir, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
}

func TestStartClusterFails(t *testing.T) {
	requireRedis(t)
	t.Run("bad extra args", func(t *testing.T) {
		tmp := privateTempDir(t)
		_, err := StartCluster(context.Background(), NativeOptions{ExtraArgs: []string{"--no-such-option", "1"}})
		if !errors.Is(err, ErrServerExited) || !strings.Contains(err.Error(), "Bad directive") {
			t.Fatalf("err = %v, want ErrServerExited with the log", err)
		}
		assertEmptyDir(t, tmp)
	})
	t.Run("timeout", func(t *testing.T) {
		tmp := privateTempDir(t)
		_, err := StartCluster(context.Background(), NativeOptions{StartTimeout: 500 * time.Millisecond})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "StartTimeout") {
			t.Fatalf("err = %v, want a StartTimeout error", err)
		}
		assertEmptyDir(t, tmp)
	})
}

func TestParseClusterNodes(t *testing.T) {
	const out = `07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,host-4 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922
292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master - 0 1426238318243 3 connected 10923-16383 [100->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]
6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@31005 slave 67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 0 1426238316232 5 connected
824fe116063bc5fcf9f4ffd895bc17aee7731ac3 127.0.0.1:30006@31006 slave 292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 0 1426238317741 6 connected
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460
3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a3a 127.0.0.1:30007@31007 master,fail - 0 0 7 disconnected
`
	nodes, err := parseClusterNodes(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 7 || nodes[0].addr != "127.0.0.1:30004" || nodes[5].link != "connected" || !nodes[5].has("myself") {
		t.Fatalf("parsed %+v", nodes)
	}
	if got := nodes[2].firstSlot(); got != 10923 {
		t.Errorf("firstSlot with a migrating entry = %d, want 10923", got)
	}
	d := clusterDescription(nodes)
	var got []string
	for _, n := range d.Nodes {
		got = append(got, fmt.Sprintf("%s %s", n.Addr[len("127.0.0.1:"):], n.Role))
	}
	want := []string{
		"30001 master", "30002 master", "30003 master",
		"30004 replica", "30005 replica", "30006 replica", "30007 replica",
	}
	if !slices.Equal(got, want) {
		t.Errorf("clusterDescription = %q, want %q", got, want)
	}

	for _, bad := range []string{"", "\n", "abc 127.0.0.1:1@2 master -"} {
		if _, err := parseClusterNodes(bad); err == nil {
			t.Errorf("parseClusterNodes(%q) succeeded", bad)
		}
	}
}
