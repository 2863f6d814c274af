//go:build unix

package compose

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// startSentinelTest starts a sentinel topology for one test and stops it when the test ends.
func startSentinelTest(t *testing.T, masterName string) *Sentinel {
	t.Helper()
	requireRedis(t)
	s, err := StartSentinel(context.Background(), NativeOptions{}, masterName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// allPids returns the pid of every process a topology started at addrs.
func allPids(t *testing.T, pid func(string) int, addrs []string) []int {
	t.Helper()
	var pids []int
	for _, a := range addrs {
		p := pid(a)
		if p <= 0 {
			t.Fatalf("Pid(%s) = %d", a, p)
		}
		pids = append(pids, p)
	}
	return pids
}

// nodesWithRole returns the addresses of d's nodes with role.
func nodesWithRole(d Description, role string) []string {
	var out []string
	for _, n := range d.Nodes {
		if n.Role == role {
			out = append(out, n.Addr)
		}
	}
	return out
}

// infoField returns one field of INFO section on addr, read over a raw connection.
func infoField(t *testing.T, addr, section, field string) string {
	t.Helper()
	got := command(t, addr, "INFO "+section)
	if len(got) != 1 {
		t.Fatalf("INFO %s on %s = %q", section, addr, got)
	}
	return parseInfo(got[0])[field]
}

func TestSentinel(t *testing.T) {
	t.Parallel()
	s := startSentinelTest(t, "")

	if s.Kind() != KindSentinel || s.MasterName() != DefaultMasterName {
		t.Errorf("Kind, MasterName = %q, %q; want sentinel, %s", s.Kind(), s.MasterName(), DefaultMasterName)
	}
	d := s.Describe()
	masters, replicas, sentinels := nodesWithRole(d, RoleMaster), nodesWithRole(d, RoleReplica), nodesWithRole(d, RoleSentinel)
	if d.Kind != KindSentinel || d.MasterName != DefaultMasterName || len(masters) != 1 ||
		len(replicas) != SentinelReplicas || len(sentinels) != SentinelCount {
		t.Fatalf("Describe() = %+v, want 1 master, %d replicas, %d sentinels named %s", d, SentinelReplicas, SentinelCount, DefaultMasterName)
	}
	if got := s.Addrs(); !slices.Equal(got, sentinels) {
		t.Errorf("Addrs() = %q, want the sentinels %q", got, sentinels)
	}
	master := masters[0]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if got, err := s.MasterAddr(ctx); err != nil || got != master {
		t.Errorf("MasterAddr() = %q, %v; want %s", got, err, master)
	}
	pids := allPids(t, s.Pid, append(append([]string{master}, replicas...), sentinels...))
	if s.Pid("127.0.0.1:1") != 0 {
		t.Error("Pid of an address not started is not 0")
	}
	if err := s.Kill("127.0.0.1:1"); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("Kill(unknown) = %v, want ErrUnknownNode", err)
	}

	// Each process is what Describe says, as the servers themselves report it.
	if got := infoField(t, master, "replication", "role"); got != "master" {
		t.Errorf("%s role:%s, want master", master, got)
	}
	for _, r := range replicas {
		if got := infoField(t, r, "replication", "role"); got != "slave" {
			t.Errorf("replica %s role:%s, want slave", r, got)
		}
		if got := infoField(t, r, "replication", "master_port"); !strings.HasSuffix(master, ":"+got) {
			t.Errorf("replica %s replicates port %s, want %s", r, got, master)
		}
	}
	for _, sn := range sentinels {
		if got := infoField(t, sn, "server", "redis_mode"); got != "sentinel" {
			t.Errorf("%s redis_mode:%s, want sentinel", sn, got)
		}
		// The documented timings are the ones in force.
		f := command(t, sn, "SENTINEL MASTER "+DefaultMasterName)
		conf := map[string]string{}
		for i := 0; i+1 < len(f); i += 2 {
			conf[f[i]] = f[i+1]
		}
		if conf["down-after-milliseconds"] != "1000" || conf["failover-timeout"] != "5000" || conf["quorum"] != "2" {
			t.Errorf("sentinel %s: down-after %s, failover-timeout %s, quorum %s; want 1000, 5000, 2",
				sn, conf["down-after-milliseconds"], conf["failover-timeout"], conf["quorum"])
		}
	}

	// A client in sentinel mode finds the master through the sentinels and writes to it.
	client, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:  s.Addrs(),
		Sentinel:     rueidis.SentinelOption{MasterSet: s.MasterName()},
		DisableCache: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := client.Do(ctx, client.B().Set().Key("k").Value("before").Build()).Error(); err != nil {
		t.Fatalf("SET through sentinel client: %v", err)
	}
	if got := command(t, master, "GET k"); !slices.Equal(got, []string{"before"}) {
		t.Errorf("GET k on the master = %q, want before", got)
	}

	t.Run("attach", func(t *testing.T) { testAttachSentinel(t, s) })

	t.Run("failover", func(t *testing.T) {
		if err := s.Kill(master); err != nil {
			t.Fatal(err)
		}
		if err := s.Kill(master); err != nil {
			t.Errorf("Kill of a dead process: %v", err)
		}
		// Detection takes SentinelDownAfter, the election and promotion a few seconds more;
		// a failed first attempt is retried after 2 × SentinelFailoverTimeout.
		deadline := time.Now().Add(SentinelDownAfter + 3*SentinelFailoverTimeout)
		var now string
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			now, err = s.MasterAddr(ctx)
			cancel()
			if err == nil && now != master {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("master still %q (%v) after killing %s", now, err, master)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if !slices.Contains(replicas, now) {
			t.Fatalf("new master %s is not a former replica %q", now, replicas)
		}
		if got := nodesWithRole(s.Describe(), RoleMaster); !slices.Equal(got, []string{now}) {
			t.Errorf("Describe() masters after failover = %q, want [%s]", got, now)
		}
		// The promoted replica has the data and takes writes, through the same client.
		if got := command(t, now, "GET k"); !slices.Equal(got, []string{"before"}) {
			t.Errorf("GET k on the new master = %q, want before", got)
		}
		wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for {
			err := client.Do(wctx, client.B().Set().Key("k").Value("after").Build()).Error()
			if err == nil {
				break
			}
			if wctx.Err() != nil {
				t.Fatalf("SET after failover: %v", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if got := command(t, now, "GET k"); !slices.Equal(got, []string{"after"}) {
			t.Errorf("GET k on the new master = %q, want after", got)
		}
	})

	client.Close()
	dirs := []string{}
	for _, n := range slices.Concat(s.data, s.sentinels) {
		dirs = append(dirs, n.proc.dir)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, pid := range pids {
		assertGone(t, pid)
	}
	for _, dir := range dirs {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("temp dir %s still there after Close (stat: %v)", dir, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
	if d := s.Describe(); len(nodesWithRole(d, RoleMaster)) != 1 {
		t.Errorf("Describe() after Close = %+v, want the roles at start", d)
	}
}

func TestStartSentinelCustomName(t *testing.T) {
	t.Parallel()
	s := startSentinelTest(t, "orders-db")
	for _, sn := range s.Addrs() {
		got := command(t, sn, "SENTINEL GET-MASTER-ADDR-BY-NAME orders-db")
		if len(got) != 2 {
			t.Errorf("sentinel %s does not know orders-db: %q", sn, got)
		}
	}
	if d := s.Describe(); d.MasterName != "orders-db" {
		t.Errorf("Describe().MasterName = %q", d.MasterName)
	}
}

func TestStartSentinelBadMasterName(t *testing.T) {
	for _, name := range []string{"my master", "a\nsentinel monitor x", strings.Repeat("x", 129)} {
		if _, err := StartSentinel(context.Background(), NativeOptions{}, name); !errors.Is(err, ErrBadSpec) {
			t.Errorf("StartSentinel(%q) = %v, want ErrBadSpec", name, err)
		}
	}
}

// A failed start leaves nothing behind: no process, no temp dir.
func TestStartSentinelFails(t *testing.T) {
	requireRedis(t)
	t.Run("bad extra args", func(t *testing.T) {
		tmp := privateTempDir(t)
		_, err := StartSentinel(context.Background(), NativeOptions{ExtraArgs: []string{"--no-such-option", "1"}}, "")
		if !errors.Is(err, ErrServerExited) || !strings.Contains(err.Error(), "Bad directive") {
			t.Fatalf("err = %v, want ErrServerExited with the log", err)
		}
		assertEmptyDir(t, tmp)
	})
	t.Run("timeout", func(t *testing.T) {
		tmp := privateTempDir(t)
		_, err := StartSentinel(context.Background(), NativeOptions{StartTimeout: 300 * time.Millisecond}, "")
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "StartTimeout") {
			t.Fatalf("err = %v, want a StartTimeout error", err)
		}
		assertEmptyDir(t, tmp)
	})
}
