package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/compose/redistest"
)

// procState returns the state letter of /proc/pid/stat: T is stopped.
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("read state of pid %d: %v", pid, err)
	}
	// "pid (comm) S ...": the state follows the last ')'.
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[0]
}

// pong reports whether addr answers PING within a second.
func pong(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// A pause of a real server is resumed when the run is cancelled long before the pause's end:
// the process is stopped (T) during the pause and running again, answering, once Run returns.
func TestPauseResumedOnCancel(t *testing.T) {
	s := redistest.NewServer(t)
	sched := &Schedule{Faults: mustParse(t, "pause:master@0s+1h"), Target: NewDeployment(s, nil)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan []Event)
	go func() { done <- sched.Run(ctx, time.Now()) }()

	deadline := time.Now().Add(5 * time.Second)
	for procState(t, s.Pid()) != "T" {
		if time.Now().After(deadline) {
			t.Fatalf("server pid %d never stopped (state %s)", s.Pid(), procState(t, s.Pid()))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if pong(s.Addr()) {
		t.Fatal("a paused server answered PING")
	}
	cancel()
	var events []Event
	select {
	case events = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if st := procState(t, s.Pid()); st == "T" {
		t.Fatalf("server left stopped after the run was cancelled")
	}
	if !pong(s.Addr()) {
		t.Error("resumed server does not answer PING")
	}
	if ev := events[0]; !ev.Fired || ev.Err != nil || ev.Lasted >= time.Hour {
		t.Errorf("event %+v; want fired, cut short, no error", ev)
	}
}

// kill then restart brings the server back on its port, as a new process; signals to a killed
// server are refused rather than sent to whatever reuses its pid.
func TestKillRestartSingle(t *testing.T) {
	s := redistest.NewServer(t)
	before := s.Pid()
	d := NewDeployment(s, nil)
	if !d.Signals() {
		t.Fatal("a native single cannot be signalled")
	}
	events := (&Schedule{Faults: mustParse(t, "kill:master@0s", "restart:master@50ms"), Target: d}).Run(context.Background(), time.Now())
	for _, ev := range events {
		if !ev.Fired || ev.Err != nil || ev.Addr != s.Addr() {
			t.Fatalf("%+v", ev)
		}
	}
	if s.Pid() == before || !pong(s.Addr()) {
		t.Errorf("after restart: pid %d (was %d), PING answered %v", s.Pid(), before, pong(s.Addr()))
	}
	if err := s.Restart(context.Background()); !errors.Is(err, compose.ErrStillRunning) {
		t.Errorf("restart of a running server: %v; want ErrStillRunning", err)
	}
	if err := d.Kill(context.Background(), s.Addr()); err != nil {
		t.Fatal(err)
	}
	if err := d.Pause(context.Background(), s.Addr()); !errors.Is(err, compose.ErrExited) {
		t.Errorf("pause of a killed server: %v; want ErrExited", err)
	}
	if err := d.Kill(context.Background(), "127.0.0.1:1"); !errors.Is(err, compose.ErrUnknownNode) {
		t.Errorf("kill of a node not in the topology: %v; want ErrUnknownNode", err)
	}
}

// failover@0s on a sentinel topology makes a replica the master.
func TestSentinelFailoverCommand(t *testing.T) {
	s := redistest.NewSentinel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	old, err := s.MasterAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	events := (&Schedule{Faults: mustParse(t, "failover@0s"), Target: NewDeployment(s, nil)}).Run(ctx, time.Now())
	if ev := events[0]; !ev.Fired || ev.Err != nil {
		t.Fatalf("%+v", ev)
	}
	for {
		now, err := s.MasterAddr(ctx)
		if err == nil && now != old {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("master still %s (err %v) after SENTINEL FAILOVER", old, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// failover:replica2@0s on a cluster makes that replica a master (CLUSTER FAILOVER on it).
func TestClusterFailoverCommand(t *testing.T) {
	c := redistest.NewCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	replica, err := Resolve(c.Describe(), Node{RoleReplica, 2})
	if err != nil {
		t.Fatal(err)
	}
	events := (&Schedule{Faults: mustParse(t, "failover:replica2@0s"), Target: NewDeployment(c, nil)}).Run(ctx, time.Now())
	if ev := events[0]; !ev.Fired || ev.Err != nil || ev.Addr != replica {
		t.Fatalf("%+v; want fired on %s", ev, replica)
	}
	for {
		for _, m := range c.Masters() {
			if m == replica {
				return
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("%s is not a master after CLUSTER FAILOVER; masters %v", replica, c.Masters())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
