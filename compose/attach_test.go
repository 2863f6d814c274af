//go:build unix

package compose

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/conn/conntest"
)

// attachTest attaches for one test, failing it on error, and closes the topology at the end.
func attachTest(t *testing.T, spec Spec, addrs ...string) Topology {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	top, err := Attach(ctx, spec, addrs)
	if err != nil {
		t.Fatalf("Attach(%s, %q): %v", spec, addrs, err)
	}
	t.Cleanup(func() {
		if err := top.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return top
}

// attachFails checks that Attach refuses with an error wrapping want (unless nil) and saying
// every one of says.
func attachFails(t *testing.T, spec Spec, addrs []string, want error, says ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	top, err := Attach(ctx, spec, addrs)
	if err == nil {
		top.Close()
		t.Fatalf("Attach(%s, %q) succeeded", spec, addrs)
	}
	if top != nil {
		t.Errorf("Attach returned a topology with error %v", err)
	}
	if want != nil && !errors.Is(err, want) {
		t.Errorf("Attach(%s, %q) = %v, want %v", spec, addrs, err, want)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("Attach(%s, %q) error lacks %q: %v", spec, addrs, s, err)
		}
	}
}

// deadAddr returns a loopback address where nothing listens.
func deadAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestAttachInput(t *testing.T) {
	tests := []struct {
		name  string
		spec  Spec
		addrs []string
		says  string
	}{
		{"no address", Spec{Kind: KindSingle}, nil, "no address given"},
		{"single with two", Spec{Kind: KindSingle}, []string{"127.0.0.1:1", "127.0.0.1:2"}, "use masters:2"},
		{"masters count", Spec{Kind: KindMasters, Masters: 3}, []string{"127.0.0.1:1", "127.0.0.1:2"}, "masters:3 needs 3 addresses, got 2"},
		{"no port", Spec{Kind: KindSingle}, []string{"127.0.0.1"}, "want host:port"},
		{"bad port", Spec{Kind: KindSingle}, []string{"127.0.0.1:http"}, "port must be a number"},
		{"port zero", Spec{Kind: KindSingle}, []string{"127.0.0.1:0"}, "port must be a number"},
		{"no host", Spec{Kind: KindSingle}, []string{":6379"}, "want host:port"},
		{"twice", Spec{Kind: KindCluster}, []string{"127.0.0.1:1", "127.0.0.1:1"}, "given twice"},
		{"unknown kind", Spec{Kind: "ring"}, []string{"127.0.0.1:1"}, "want single, sentinel"},
		{"master name with space", Spec{Kind: KindSentinel, MasterName: "my master"}, []string{"127.0.0.1:1"}, "white space"},
		{"too many masters", Spec{Kind: KindMasters, Masters: MaxMasters + 1}, []string{"127.0.0.1:1"}, "masters:N needs N"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			attachFails(t, tt.spec, tt.addrs, ErrBadSpec, tt.says)
		})
	}
}

func TestAttachUnreachable(t *testing.T) {
	dead := deadAddr(t)
	attachFails(t, Spec{Kind: KindSingle}, []string{dead}, ErrUnreachable, "no answer from "+dead, "connection refused")
	// A deadline bounds the attempt even against a listener that never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Attach(ctx, Spec{Kind: KindSingle}, []string{l.Addr().String()})
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("Attach to a silent listener = %v, want ErrUnreachable", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Attach to a silent listener took %v, ignoring ctx", took)
	}
}

func TestAttachSingleAndMasters(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	m, err := StartMasters(context.Background(), NativeOptions{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	a, b := m.Addrs()[0], m.Addrs()[1]

	single := attachTest(t, Spec{Kind: KindSingle}, a)
	if single.Kind() != KindSingle || !slices.Equal(single.Addrs(), []string{a}) {
		t.Errorf("attached single: Kind %q Addrs %q", single.Kind(), single.Addrs())
	}
	if d := single.Describe(); d.Kind != KindSingle || !slices.Equal(d.Nodes, []Node{{a, RoleMaster}}) {
		t.Errorf("attached single: Describe() = %+v", d)
	}

	for _, spec := range []Spec{{Kind: KindMasters}, {Kind: KindMasters, Masters: 2}} {
		top := attachTest(t, spec, a, b)
		want := []Node{{a, RoleMaster}, {b, RoleMaster}}
		if d := top.Describe(); d.Kind != KindMasters || !slices.Equal(d.Nodes, want) {
			t.Errorf("attached %s: Describe() = %+v, want %+v", spec, d, want)
		}
		if top.Kind() != KindMasters {
			t.Errorf("attached %s: Kind() = %q", spec, top.Kind())
		}
	}

	// Close touches only its own connections: the server keeps running.
	if err := single.Close(); err != nil {
		t.Fatal(err)
	}
	if got := command(t, a, "PING"); !slices.Equal(got, []string{"PONG"}) {
		t.Errorf("PING after closing the attached topology = %q", got)
	}
	if d := single.Describe(); len(d.Nodes) != 1 {
		t.Errorf("Describe() after Close = %+v", d)
	}

	t.Run("wrong kind", func(t *testing.T) {
		attachFails(t, Spec{Kind: KindCluster}, []string{a}, ErrTopologyMismatch,
			a+" is not a cluster node (cluster_enabled:0)")
		attachFails(t, Spec{Kind: KindSentinel}, []string{a}, ErrTopologyMismatch,
			a+" is not a Redis Sentinel (redis_mode:standalone)")
	})

	t.Run("replica", func(t *testing.T) {
		if got := command(t, b, "REPLICAOF "+strings.Replace(a, ":", " ", 1)); !slices.Equal(got, []string{"OK"}) {
			t.Fatalf("REPLICAOF = %q", got)
		}
		attachFails(t, Spec{Kind: KindMasters}, []string{a, b}, ErrTopologyMismatch,
			b+" is a slave (of "+a+")", "needs masters")
	})
}

func TestAttachNeedsPassword(t *testing.T) {
	s := startTest(t, NativeOptions{ExtraArgs: []string{"--requirepass", "secret"}})
	attachFails(t, Spec{Kind: KindSingle}, []string{s.Addr()}, conn.ErrAuth,
		s.Addr()+": the server requires a password", "--password-file")
}

func TestAttachWithPassword(t *testing.T) {
	const password = "attach-secret-5d1e"
	s := startTest(t, NativeOptions{ExtraArgs: []string{"--requirepass", password}})
	settings := func(pw string) *conn.Settings {
		c, err := conn.New(conn.Options{Addrs: []string{"redis://" + s.Addr() + "/2"}, PasswordFile: conntest.PasswordFile(t, pw), Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	top, err := AttachWith(ctx, Spec{Kind: KindSingle}, settings(password))
	if err != nil {
		t.Fatalf("AttachWith: %v", err)
	}
	if got := top.Addrs(); !slices.Equal(got, []string{s.Addr()}) {
		t.Errorf("Addrs() = %q, want %q", got, s.Addr())
	}
	top.Close()
	_, err = AttachWith(ctx, Spec{Kind: KindSingle}, settings("wrong"))
	if !errors.Is(err, conn.ErrAuth) || errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("AttachWith, wrong password: %v, want conn.ErrAuth saying WRONGPASS", err)
	}
	if strings.Contains(fmt.Sprint(err), password) {
		t.Errorf("error shows the password: %v", err)
	}
}

// testAttachSentinel checks Attach against a running sentinel topology s; the TestSentinel
// calls it so that one start serves both.
func testAttachSentinel(t *testing.T, s *Sentinel) {
	top := attachTest(t, Spec{Kind: KindSentinel}, s.Addrs()...)
	want := s.Describe()
	got := top.Describe()
	if got.Kind != KindSentinel || got.MasterName != s.MasterName() {
		t.Errorf("Describe() = %+v, want kind sentinel named %s", got, s.MasterName())
	}
	// The same nodes and roles; the order of replicas and sentinels is the sentinels'.
	sortNodes := func(n []Node) []Node {
		n = slices.Clone(n)
		slices.SortFunc(n, func(a, b Node) int { return strings.Compare(a.Role+a.Addr, b.Role+b.Addr) })
		return n
	}
	if !slices.Equal(sortNodes(got.Nodes), sortNodes(want.Nodes)) {
		t.Errorf("attached Describe().Nodes = %+v, want %+v", got.Nodes, want.Nodes)
	}
	if got.Nodes[0].Role != RoleMaster {
		t.Errorf("attached Describe() does not list the master first: %+v", got.Nodes)
	}
	if mn, ok := top.(interface{ MasterName() string }); !ok || mn.MasterName() != s.MasterName() {
		t.Errorf("attached sentinel has no MasterName() %q", s.MasterName())
	}

	// One sentinel is enough to attach; it finds the rest.
	one := attachTest(t, Spec{Kind: KindSentinel, MasterName: s.MasterName()}, s.Addrs()[0])
	if got := nodesWithRole(one.Describe(), RoleSentinel); len(got) != SentinelCount {
		t.Errorf("attached through one sentinel: sentinels %q, want %d", got, SentinelCount)
	}

	master := nodesWithRole(want, RoleMaster)[0]
	attachFails(t, Spec{Kind: KindSentinel, MasterName: "nosuch"}, s.Addrs(), ErrTopologyMismatch,
		"monitors no master named \"nosuch\"", "it monitors: "+s.MasterName())
	attachFails(t, Spec{Kind: KindCluster}, s.Addrs()[:1], ErrTopologyMismatch,
		"is a Redis Sentinel, not a cluster node")
	attachFails(t, Spec{Kind: KindSingle}, s.Addrs()[:1], ErrTopologyMismatch,
		"is a Redis Sentinel, not a data node")
	attachFails(t, Spec{Kind: KindSentinel}, []string{master}, ErrTopologyMismatch,
		master+" is not a Redis Sentinel (redis_mode:standalone)")
	replica := nodesWithRole(want, RoleReplica)[0]
	attachFails(t, Spec{Kind: KindSingle}, []string{replica}, ErrTopologyMismatch,
		replica+" is a slave (of "+master+")")
}

// testAttachCluster checks Attach against a running cluster c; TestCluster calls it.
func testAttachCluster(t *testing.T, c *Cluster) {
	top := attachTest(t, Spec{Kind: KindCluster}, c.Addrs()...)
	if got, want := top.Describe(), c.Describe(); got.Kind != KindCluster || !slices.Equal(got.Nodes, want.Nodes) {
		t.Errorf("attached Describe() = %+v, want %+v", got, want)
	}
	one := attachTest(t, Spec{Kind: KindCluster}, c.Addrs()[0])
	if got := one.Describe(); len(got.Nodes) != ClusterMasters+ClusterReplicas {
		t.Errorf("attached through one node: Describe() = %+v", got)
	}
	node := c.Addrs()[0]
	attachFails(t, Spec{Kind: KindSingle}, []string{node}, ErrTopologyMismatch,
		node+" is a cluster node (cluster_enabled:1): use --topology cluster")
	attachFails(t, Spec{Kind: KindSentinel}, []string{node}, ErrTopologyMismatch,
		node+" is not a Redis Sentinel (redis_mode:cluster)")
}

// A cluster of one node, which never met another, lists itself in CLUSTER NODES as ":port": the
// attached topology must name it at the address it was reached at, not at a port of this
// machine (lockbench read its CPU and commands at ":port", which is only right on loopback).
func TestAttachOneNodeCluster(t *testing.T) {
	t.Parallel()
	s := startTest(t, NativeOptions{ExtraArgs: []string{"--cluster-enabled", "yes"}})
	addr := s.Addr()
	if got := command(t, addr, "CLUSTER ADDSLOTSRANGE 0 16383"); !slices.Equal(got, []string{"OK"}) {
		t.Fatalf("CLUSTER ADDSLOTSRANGE = %q", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(strings.Join(command(t, addr, "CLUSTER INFO"), "\n"), "cluster_state:ok") {
		if time.Now().After(deadline) {
			t.Fatal("the one-node cluster did not reach cluster_state:ok in 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	nodes := strings.Join(command(t, addr, "CLUSTER NODES"), "\n")
	if _, port, _ := net.SplitHostPort(addr); !strings.Contains(nodes, " :"+port+"@") {
		t.Fatalf("CLUSTER NODES does not list the node as :%s, the case this test is about:\n%s", port, nodes)
	}
	top := attachTest(t, Spec{Kind: KindCluster}, addr)
	if d := top.Describe(); !slices.Equal(d.Nodes, []Node{{addr, RoleMaster}}) {
		t.Errorf("attached one-node cluster: Describe() = %+v, want the node at %s", d, addr)
	}
}

func TestPlaceSelf(t *testing.T) {
	nodes := []clusterNode{
		{addr: ":7000", flags: []string{"myself", "master"}},
		{addr: ":7001", flags: []string{"master"}},
		{addr: "10.0.0.2:7002", flags: []string{"master"}},
	}
	placeSelf(nodes, "redis.example:7000")
	got := []string{nodes[0].addr, nodes[1].addr, nodes[2].addr}
	if want := []string{"redis.example:7000", ":7001", "10.0.0.2:7002"}; !slices.Equal(got, want) {
		t.Errorf("placeSelf = %q, want %q", got, want)
	}
	// An address without a port (a unix socket's path) gives no host: the node stays as listed.
	unix := []clusterNode{{addr: ":7000", flags: []string{"myself", "master"}}}
	if placeSelf(unix, "/run/redis.sock"); unix[0].addr != ":7000" {
		t.Errorf("placeSelf with a socket path = %q, want :7000 as listed", unix[0].addr)
	}
}
