package drivers

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-redsync/redsync/v4"
	"github.com/lockbench/lockbench/compose"
)

func TestTopologyNamesAreComposeKinds(t *testing.T) {
	for _, c := range [][2]string{
		{topoSingle, compose.KindSingle},
		{topoSentinel, compose.KindSentinel},
		{topoCluster, compose.KindCluster},
		{topoMasters, compose.KindMasters},
	} {
		if c[0] != c[1] {
			t.Errorf("drivers says %q where compose says %q", c[0], c[1])
		}
	}
}

func TestTopology(t *testing.T) {
	addr := []string{"127.0.0.1:1"}
	for _, c := range []struct {
		cfg  Config
		want string // "" means an error
	}{
		{Config{Addrs: addr}, topoSingle},
		{Config{Topology: "single", Addrs: addr}, topoSingle},
		{Config{Topology: "cluster", Addrs: addr}, topoCluster},
		{Config{Topology: "masters", Addrs: addr}, topoMasters},
		{Config{Topology: "sentinel", Addrs: addr, MasterName: "mymaster"}, topoSentinel},
		{Config{Topology: "sentinel", Addrs: addr}, ""},
		{Config{Topology: "Single", Addrs: addr}, ""},
		{Config{Topology: "single"}, ""},
	} {
		got, err := topology(c.cfg)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("topology(%+v) = %q, %v; want %q", c.cfg, got, err, c.want)
		}
		if errors.Is(err, ErrUnsupported) {
			t.Errorf("topology(%+v): a bad config wraps ErrUnsupported: %v", c.cfg, err)
		}
	}
	if _, err := singleNodeTopology(Config{Topology: "masters", Addrs: addr}, "x"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("singleNodeTopology on masters = %v, want ErrUnsupported", err)
	}
}

func TestVersionAtLeast(t *testing.T) {
	for _, c := range []struct {
		v    string
		want []int
		ok   bool
	}{
		{"7.0.15", []int{7, 0, 5}, true},
		{"7.0.5", []int{7, 0, 5}, true},
		{"7.0.4", []int{7, 0, 5}, false},
		{"6.2.14", []int{7}, false},
		{"7.2.4", []int{7}, true},
		{"10.0.0", []int{7, 0, 5}, true},
		{"7", []int{7, 0, 5}, false},
		{"", []int{7}, false},
		{"x.y", []int{7}, false},
	} {
		if got := versionAtLeast(c.v, c.want...); got != c.ok {
			t.Errorf("versionAtLeast(%q, %v) = %v", c.v, c.want, got)
		}
	}
}

func TestInfoField(t *testing.T) {
	info := "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n"
	if got := infoField(info, "redis_version"); got != "7.0.15" {
		t.Errorf("redis_version = %q", got)
	}
	if got := infoField(info, "redis_build_id"); got != "" {
		t.Errorf("missing field = %q", got)
	}
}

func TestCountRedisErrors(t *testing.T) {
	node := func(i int) error { return &redsync.RedisError{Node: i, Err: errors.New("dial")} }
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{redsync.ErrFailed, 0},
		{&redsync.ErrTaken{Nodes: []int{0}}, 0},
		{node(0), 1},
		{errors.Join(node(0), &redsync.ErrNodeTaken{Node: 1}, node(2)), 2},
		{fmt.Errorf("wrapped: %w", errors.Join(node(0), node(1))), 2},
	} {
		if got := countRedisErrors(c.err); got != c.want {
			t.Errorf("countRedisErrors(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestRedissonChannelName(t *testing.T) {
	for name, want := range map[string]string{
		"orders":    "redisson_lock__channel:{orders}",
		"{user}:42": "redisson_lock__channel:{user}:42",
	} {
		if got := redissonChannelName(name); got != want {
			t.Errorf("channel of %q = %q, want %q", name, got, want)
		}
	}
}
