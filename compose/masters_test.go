//go:build unix

package compose

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestStartMasters(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	top, err := Start(context.Background(), Spec{Kind: KindMasters, Masters: 3}, NativeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { top.Close() })
	m, ok := top.(*Masters)
	if !ok {
		t.Fatalf("Start(masters:3) returned %T, want *Masters", top)
	}
	addrs := m.Addrs()
	if len(addrs) != 3 || m.Kind() != KindMasters {
		t.Fatalf("Addrs() = %q, Kind() = %q", addrs, m.Kind())
	}
	sorted := slices.Clone(addrs)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != 3 {
		t.Errorf("addresses not distinct: %q", addrs)
	}
	d := m.Describe()
	if d.Kind != KindMasters || !slices.Equal(nodesWithRole(d, RoleMaster), addrs) || len(d.Nodes) != 3 {
		t.Errorf("Describe() = %+v, want the 3 addresses as masters", d)
	}
	pids := allPids(t, m.Pid, addrs)
	// Independent: a key written to one is not on the others.
	for _, a := range addrs {
		if got := infoField(t, a, "replication", "role"); got != "master" {
			t.Errorf("%s role:%s", a, got)
		}
	}
	command(t, addrs[0], "SET only-here 1")
	if got := command(t, addrs[1], "EXISTS only-here"); !slices.Equal(got, []string{"0"}) {
		t.Errorf("key written to %s exists on %s", addrs[0], addrs[1])
	}

	// Killing one (as RedLock fault tests do) leaves the others serving.
	if err := m.Kill(addrs[1]); err != nil {
		t.Fatal(err)
	}
	assertGone(t, pids[1])
	for _, a := range []string{addrs[0], addrs[2]} {
		if got := command(t, a, "PING"); !slices.Equal(got, []string{"PONG"}) {
			t.Errorf("PING %s after killing another = %q", a, got)
		}
	}
	if err := m.Kill("127.0.0.1:1"); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("Kill(unknown) = %v, want ErrUnknownNode", err)
	}

	if err := m.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, pid := range pids {
		assertGone(t, pid)
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
}

func TestStartMastersFails(t *testing.T) {
	for _, n := range []int{0, -1, MaxMasters + 1} {
		if _, err := StartMasters(context.Background(), NativeOptions{}, n); !errors.Is(err, ErrBadSpec) {
			t.Errorf("StartMasters(%d) = %v, want ErrBadSpec", n, err)
		}
	}
	requireRedis(t)
	tmp := privateTempDir(t)
	_, err := StartMasters(context.Background(), NativeOptions{ExtraArgs: []string{"--no-such-option", "1"}}, 3)
	if !errors.Is(err, ErrServerExited) || !strings.Contains(err.Error(), "Bad directive") {
		t.Fatalf("err = %v, want ErrServerExited with the log", err)
	}
	assertEmptyDir(t, tmp)
}
