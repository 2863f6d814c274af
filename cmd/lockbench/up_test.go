package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"github.com/lockbench/lockbench/kept"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// upProc is a `lockbench up` subprocess (the test binary standing in for lockbench).
type upProc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{} // closed once the process has exited and been reaped
	err            error         // Wait's result, set before done is closed
}

// spawnUp starts `lockbench up args...` with extra environment env.
func spawnUp(t *testing.T, env []string, args ...string) *upProc {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server not on PATH (CI must install it: scripts/install-deps.sh)")
		}
		t.Skip("redis-server not on PATH; install it with scripts/install-deps.sh")
	}
	p := &upProc{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], append([]string{"up"}, args...)...)
	p.cmd.Env = append(append(os.Environ(), "LOCKBENCH_TEST_MAIN=1"), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			// A failed test must not leave a topology behind: up stops it on SIGTERM.
			p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(20 * time.Second):
				p.cmd.Process.Kill()
				<-p.done
			}
		}
	})
	return p
}

// summary waits until up has printed its summary and returns its "key value" lines.
func (p *upProc) summary(t *testing.T) map[string][]string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for !strings.Contains(p.stdout.String(), "\nrun ") {
		select {
		case <-p.done:
			t.Fatalf("up exited before it was ready (%v)\nstdout:\n%s\nstderr:\n%s", p.err, p.stdout, p.stderr)
		case <-deadline:
			t.Fatalf("up not ready in time\nstdout:\n%s\nstderr:\n%s", p.stdout, p.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	lines := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(p.stdout.String()))
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), " ")
		lines[key] = append(lines[key], strings.TrimSpace(value))
	}
	return lines
}

// exit waits (bounded) for up to end and returns its exit code.
func (p *upProc) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("up did not exit\nstderr:\n%s", p.stderr)
	}
	return p.cmd.ProcessState.ExitCode()
}

func lockbenchIn(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

func readStateFile(t *testing.T, dir, name string) kept.State {
	t.Helper()
	st, err := kept.Read(kept.Path(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func assertPidsGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("node process %d still exists (kill 0: %v)", pid, err)
		}
	}
}

func TestUpStatusDown(t *testing.T) {
	cases := []struct {
		topology string
		nodes    int
		runArgs  bool // also benchmark it with lockbench run from the printed command line
	}{
		{"single", 1, true},
		{"cluster", 6, true},
	}
	for _, tc := range cases {
		t.Run(tc.topology, func(t *testing.T) {
			dir := t.TempDir()
			up := spawnUp(t, nil, "--topology", tc.topology, "--state-dir", dir, "--name", "t1")
			sum := up.summary(t)
			if len(sum["node"]) != tc.nodes || len(sum["addr"]) != 1 || len(sum["run"]) != 1 {
				t.Fatalf("summary: %v", sum)
			}
			addrs := strings.Split(sum["addr"][0], ",")
			for _, a := range addrs {
				if err := kept.Ping(a, 2*time.Second, false); err != nil {
					t.Errorf("PING %s: %v", a, err)
				}
			}

			st := readStateFile(t, dir, "t1")
			if st.Pid != up.cmd.Process.Pid || st.Topology != tc.topology || len(st.NodePids) != tc.nodes ||
				st.Description == nil || len(st.Description.Nodes) != tc.nodes {
				t.Fatalf("state file: %+v (up pid %d)", st, up.cmd.Process.Pid)
			}

			code, out, errs := lockbenchIn("status", "--state-dir", dir)
			if code != exitOK || !strings.Contains(out, "t1  "+tc.topology) || strings.Count(out, " ok\n") != tc.nodes {
				t.Fatalf("status: exit %d\n%s%s", code, out, errs)
			}
			for _, a := range addrs {
				if !strings.Contains(out, a) {
					t.Errorf("status does not list %s:\n%s", a, out)
				}
			}

			if tc.runArgs {
				// The printed run line, as a user would paste it, made short and quiet.
				args := strings.Fields(sum["run"][0])[1:]
				args = append(args, "--duration", "300ms", "--warmup", "0s", "--concurrency", "4", "--keys", "20", "--no-results")
				if code, out, errs := lockbenchIn(args...); code != exitOK || !strings.Contains(out, "acq/s") {
					t.Errorf("lockbench %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
				}
			}

			code, out, errs = lockbenchIn("down", "--name", "t1", "--state-dir", dir)
			if code != exitOK || !strings.Contains(out, `stopped "t1"`) {
				t.Fatalf("down: exit %d\n%s%s", code, out, errs)
			}
			if code := up.exit(t); code != exitOK {
				t.Fatalf("up exited %d after down\n%s", code, up.stderr)
			}
			assertPidsGone(t, st.NodePids)
			if _, err := os.Stat(kept.Path(dir, "t1")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("state file still there after down: %v", err)
			}
			if code, out, _ := lockbenchIn("status", "--state-dir", dir); code != exitOK || !strings.Contains(out, "nothing running") {
				t.Errorf("status after down: exit %d, %q", code, out)
			}
		})
	}
}

func TestUpStopsOnCtrlC(t *testing.T) {
	dir := t.TempDir()
	up := spawnUp(t, nil, "--topology", "masters:2", "--state-dir", dir)
	up.summary(t)
	st := readStateFile(t, dir, kept.DefaultName)
	if len(st.NodePids) != 2 {
		t.Fatalf("node pids %v, want 2", st.NodePids)
	}
	if err := up.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code := up.exit(t); code != exitOK {
		t.Fatalf("up exited %d after Ctrl-C\n%s", code, up.stderr)
	}
	assertPidsGone(t, st.NodePids)
	if _, err := os.Stat(kept.Path(dir, kept.DefaultName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file still there after Ctrl-C: %v", err)
	}
}

func TestUpRefusesATakenName(t *testing.T) {
	dir := t.TempDir()
	first := spawnUp(t, nil, "--state-dir", dir, "--name", "x")
	first.summary(t)

	second := spawnUp(t, nil, "--state-dir", dir, "--name", "x")
	if code := second.exit(t); code != exitFailure {
		t.Fatalf("second up with the same name exited %d, want %d\n%s", code, exitFailure, second.stderr)
	}
	if msg := second.stderr.String(); !strings.Contains(msg, `named "x" is already running`) || !strings.Contains(msg, "lockbench down --name x") {
		t.Errorf("second up's message does not say what to do:\n%s", msg)
	}
	// The refusal touched nothing of the first.
	if st := readStateFile(t, dir, "x"); st.Pid != first.cmd.Process.Pid {
		t.Fatalf("state file now names pid %d, want the first up's %d", st.Pid, first.cmd.Process.Pid)
	}
	if code, out, _ := lockbenchIn("status", "--state-dir", dir, "--name", "x"); code != exitOK {
		t.Fatalf("status of the first up: exit %d\n%s", code, out)
	}
	if code, out, errs := lockbenchIn("down", "--all", "--state-dir", dir); code != exitOK || !strings.Contains(out, `stopped "x"`) {
		t.Fatalf("down --all: exit %d\n%s%s", code, out, errs)
	}
	if code := first.exit(t); code != exitOK {
		t.Fatalf("first up exited %d", code)
	}
}

func TestStatusReportsADeadNode(t *testing.T) {
	dir := t.TempDir()
	up := spawnUp(t, nil, "--topology", "masters:2", "--state-dir", dir)
	up.summary(t)
	st := readStateFile(t, dir, kept.DefaultName)
	victim := st.Description.Nodes[0].Addr
	// The node is a grandchild of this test: killing it is the fault under test.
	if err := kept.Signal(st.NodePids[0], syscall.SIGKILL, func(pid int) bool { return kept.NodeAlive(st, pid) }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var code int
	var out string
	for {
		code, out, _ = lockbenchIn("status", "--state-dir", dir, "--timeout", "500ms")
		if code != exitOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code != exitFailure || !strings.Contains(out, victim) || strings.Count(out, "DOWN") != 1 || strings.Count(out, " ok\n") != 1 {
		t.Fatalf("status with a killed node: exit %d\n%s", code, out)
	}
	if code, out, errs := lockbenchIn("down", "--state-dir", dir); code != exitOK {
		t.Fatalf("down with a dead node: exit %d\n%s%s", code, out, errs)
	}
	if code := up.exit(t); code != exitOK {
		t.Fatalf("up exited %d\n%s", code, up.stderr)
	}
	assertPidsGone(t, st.NodePids)
}

// writeStateFile writes a state file as if an up with pid had written it.
func writeStateFile(t *testing.T, dir, name string, pid int) string {
	t.Helper()
	st := kept.State{Name: name, Pid: pid, Provider: "native", Topology: "single", Started: time.Now(), Ready: time.Now(),
		Addrs: []string{"127.0.0.1:1"}}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kept.Path(dir, name), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return kept.Path(dir, name)
}

// What status and down print about state files whose up is gone or that up did not write, and
// their exit codes; what kept.Stop does to them (and that it signals nothing) is tested in
// package kept.
func TestDownCleansStaleState(t *testing.T) {
	dir := t.TempDir()

	// An up that died: its pid no longer exists.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	writeStateFile(t, dir, "dead", gone.Process.Pid)
	writeStateFile(t, dir, "dead2", gone.Process.Pid)

	// Not written by up at all.
	if err := os.WriteFile(kept.Path(dir, "garbage"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, _ := lockbenchIn("status", "--state-dir", dir)
	if code != exitFailure || strings.Count(out, "STALE") != 2 || !strings.Contains(out, "unreadable") {
		t.Fatalf("status with stale state: exit %d\n%s", code, out)
	}

	code, out, errs := lockbenchIn("down", "--all", "--state-dir", dir)
	if code != exitOK {
		t.Fatalf("down --all: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{`stale state of "dead"`, `stale state of "dead2"`, "removed unreadable state file"} {
		if !strings.Contains(out, want) {
			t.Errorf("down output lacks %q:\n%s", want, out)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("files left in the state dir: %v", files)
	}

	if code, out, _ := lockbenchIn("down", "--state-dir", dir); code != exitOK || !strings.Contains(out, `nothing running as "default"`) {
		t.Errorf("down with nothing running: exit %d, %q", code, out)
	}
	if code, out, _ := lockbenchIn("down", "--all", "--state-dir", dir); code != exitOK || !strings.Contains(out, "nothing running") {
		t.Errorf("down --all with nothing running: exit %d, %q", code, out)
	}
}

// closedDockerSocket returns a DOCKER_HOST naming a unix socket nobody listens on.
func closedDockerSocket(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	return "unix://" + path
}

func TestUpDockerWithoutEngine(t *testing.T) {
	dir := t.TempDir()
	up := spawnUp(t, []string{"DOCKER_HOST=" + closedDockerSocket(t)}, "--provider", "docker", "--state-dir", dir)
	if code := up.exit(t); code != exitFailure {
		t.Fatalf("up --provider docker with no engine exited %d, want %d\n%s", code, exitFailure, up.stderr)
	}
	msg := up.stderr.String()
	for _, want := range []string{"no Docker engine reachable", "use the native provider"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q:\n%s", want, msg)
		}
	}
	if up.stdout.String() != "" {
		t.Errorf("stdout should be empty, got %q", up.stdout)
	}
	if _, err := os.Stat(kept.Path(dir, kept.DefaultName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file left after a failed start: %v", err)
	}
}

func TestUpDownStatusUsage(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
		out  string // substring of stdout+stderr
	}{
		{[]string{"help"}, exitOK, "lockbench up"},
		{[]string{"help"}, exitOK, "lockbench status"},
		{[]string{"help", "up"}, exitOK, "--topology"},
		{[]string{"help", "down"}, exitOK, "--all"},
		{[]string{"help", "status"}, exitOK, "Examples"},
		{[]string{"help", "nope"}, exitUsage, `unknown command or topic "nope"`},
		{[]string{"up", "--help"}, exitOK, "Examples"},
		{[]string{"up", "--topology", "ring"}, exitUsage, "--topology"},
		{[]string{"up", "--topology", "masters:0"}, exitUsage, "masters:N"},
		{[]string{"up", "--provider", "k8s"}, exitUsage, `--provider "k8s"`},
		{[]string{"up", "--master-name", "m"}, exitUsage, "--master-name is for --topology sentinel"},
		{[]string{"up", "--topology", "sentinel", "--master-name", "a b"}, exitUsage, "--master-name"},
		{[]string{"up", "--name", "../etc"}, exitUsage, `--name "../etc"`},
		{[]string{"up", "--name", ""}, exitUsage, "--name"},
		{[]string{"up", "extra"}, exitUsage, `unexpected argument "extra"`},
		{[]string{"up", "--no-such-flag"}, exitUsage, "unknown flag"},
		{[]string{"down", "--all", "--name", "x"}, exitUsage, "exclude each other"},
		{[]string{"down", "--timeout", "0s"}, exitUsage, "--timeout"},
		{[]string{"down", "x"}, exitUsage, `unexpected argument "x"`},
		{[]string{"status", "--timeout", "soon"}, exitUsage, "invalid argument"},
		{[]string{"status", "--name", "a/b"}, exitUsage, "--name"},
		{[]string{"status", "--state-dir", dir}, exitOK, "nothing running"},
		{[]string{"status", "--state-dir", dir, "--name", "n"}, exitOK, `nothing running as "n"`},
	}
	for _, tc := range cases {
		code, out, errs := lockbenchIn(tc.args...)
		if all := out + errs; code != tc.code || !strings.Contains(all, tc.out) {
			t.Errorf("lockbench %q: exit %d, output %q; want exit %d containing %q", tc.args, code, all, tc.code, tc.out)
		}
	}
}
