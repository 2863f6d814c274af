package compose

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// A killed replica and a killed sentinel come back on their ports with their config: the
// replica replicates again, the sentinel monitors the master again. Close stops the restarted
// processes too, and Restart after Close starts nothing.
func TestSentinelRestart(t *testing.T) {
	t.Parallel()
	s := startSentinelTest(t, "")
	d := s.Describe()
	replica, sentinel := nodesWithRole(d, RoleReplica)[0], nodesWithRole(d, RoleSentinel)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for _, addr := range []string{replica, sentinel} {
		if err := s.Restart(ctx, addr); !errors.Is(err, ErrStillRunning) {
			t.Errorf("Restart of running %s: %v; want ErrStillRunning", addr, err)
		}
		old := s.Pid(addr)
		if err := s.Kill(addr); err != nil {
			t.Fatal(err)
		}
		if err := s.Signal(addr, syscall.SIGCONT); !errors.Is(err, ErrExited) {
			t.Errorf("Signal to killed %s: %v; want ErrExited", addr, err)
		}
		if err := s.Restart(ctx, addr); err != nil {
			t.Fatalf("Restart %s: %v", addr, err)
		}
		if s.Pid(addr) == old {
			t.Errorf("%s: pid %d unchanged by Restart", addr, old)
		}
	}
	if err := poll(ctx, func(ctx context.Context) error {
		if st := infoField(t, replica, "replication", "master_link_status"); st != "up" {
			return notReady(replica, "master_link_status %s", st)
		}
		return nil
	}); err != nil {
		t.Errorf("restarted replica: %v", err)
	}
	// The first command on the cached admin connection may find it closed by the kill.
	if err := poll(ctx, func(ctx context.Context) error {
		m, err := askMasterAddr(ctx, s.admin, sentinel, s.MasterName())
		if err != nil || m != d.Nodes[0].Addr {
			return notReady(sentinel, "says master %q (%v), want %s", m, err, d.Nodes[0].Addr)
		}
		return nil
	}); err != nil {
		t.Errorf("restarted sentinel: %v", err)
	}
	pids := allPids(t, s.Pid, append(s.data.addrs(), s.sentinels.addrs()...))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
			t.Errorf("pid %d alive after Close (%v)", pid, err)
		}
	}
	if err := s.Kill(replica); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(ctx, replica); err == nil {
		t.Error("Restart after Close started a server")
	}
}
