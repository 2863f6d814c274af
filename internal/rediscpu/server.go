// Package rediscpu measures what a redis-server spends on a list of commands: the instructions
// it executes, counted by valgrind's callgrind (exact and repeatable on a loaded machine), or
// the CPU time it reports in INFO (for converting instructions to time on this CPU). It starts
// its own redis-server on a free loopback port, sends each experiment's commands pipelined at a
// chosen depth over a plain connection, and counts only the measured commands.
//
// It is a measuring tool for lockbench's own experiments (docs/findings.md), not part of a run.
package rediscpu

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The ways a Server counts.
const (
	// ModeCallgrind runs redis-server under valgrind --tool=callgrind and counts instructions.
	ModeCallgrind = "callgrind"
	// ModeCPU runs redis-server natively and reads its CPU time (used_cpu_user + used_cpu_sys).
	ModeCPU = "cpu"
)

// Server is one redis-server started by Start. It is not safe for concurrent use.
type Server struct {
	// Addr is the server's "127.0.0.1:port".
	Addr string
	// Dir holds the server's log and, under callgrind, one dump per measurement (kept by Close
	// when keep is set, for callgrind_annotate).
	Dir  string
	mode string
	cmd  *exec.Cmd
	keep bool
	// idle is the instructions per second the server runs with no command, its cron left out
	// (see Start), measured once at start: what a measurement may hold that no command caused.
	idle  float64
	ctl   *Conn
	dumps int
}

// Start starts redis-server from PATH, under callgrind when mode is ModeCallgrind, and waits until
// it answers PING. With keep, Close leaves Dir (the callgrind dumps) in place.
func Start(ctx context.Context, mode string, keep bool) (*Server, error) {
	if mode != ModeCallgrind && mode != ModeCPU {
		return nil, fmt.Errorf("rediscpu: mode %q: want %q or %q", mode, ModeCallgrind, ModeCPU)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("rediscpu: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "rediscpu-")
	if err != nil {
		return nil, fmt.Errorf("rediscpu: %w", err)
	}
	args := []string{bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--protected-mode", "no", "--daemonize", "no", "--dir", dir,
		"--logfile", filepath.Join(dir, "redis.log")}
	if mode == ModeCallgrind {
		vg, err := exec.LookPath("valgrind")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("rediscpu: callgrind needs valgrind: %w", err)
		}
		// Instrumentation starts at once (collection is zeroed before each measurement): turning
		// it on and off per measurement would throw valgrind's translations away each time.
		// serverCron runs 10 times a second of wall time whatever the load, and valgrind makes a
		// measurement last seconds: --toggle-collect stops counting inside it, so a measurement
		// holds only what the commands cost (an idle-rate subtraction was off by 10% of a PING).
		args = append([]string{vg, "--tool=callgrind", "--dump-instr=no", "--toggle-collect=serverCron",
			"--collect-atstart=yes", // after --toggle-collect, which otherwise turns collection off at start
			"--callgrind-out-file=" + filepath.Join(dir, "callgrind.out")}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if cmd.Stderr, err = os.Create(filepath.Join(dir, "stderr.log")); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("rediscpu: %w", err)
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("rediscpu: %w", err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, mode: mode, cmd: cmd, keep: keep}
	if err := s.waitReady(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if mode == ModeCallgrind {
		if err := s.measureIdle(); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("rediscpu: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady waits for PING's reply; valgrind takes seconds to start the server.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		if c, err := Dial(s.Addr); err == nil {
			if _, err := c.Do("PING"); err == nil {
				s.ctl = c
				return nil
			}
			c.Close()
		}
		select {
		case <-ctx.Done():
			b, _ := os.ReadFile(filepath.Join(s.Dir, "stderr.log"))
			return fmt.Errorf("rediscpu: redis-server at %s did not answer PING: %w; stderr: %s", s.Addr, ctx.Err(), lastLines(string(b), 5))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Cost is what the server spent on one measured phase.
type Cost struct {
	// Instructions are callgrind's Ir count for the phase, serverCron left out (ModeCallgrind).
	Instructions float64
	// CPU is the server's user + system CPU time for the phase (ModeCPU).
	CPU time.Duration
	// Dump is the callgrind dump file of the phase (ModeCallgrind).
	Dump string
	// Elapsed is the phase's wall time (ModeCallgrind), to bound what idle work it holds.
	Elapsed time.Duration
}

// Measure runs fn and returns what the server spent meanwhile.
func (s *Server) Measure(fn func() error) (Cost, error) {
	if s.mode == ModeCPU {
		before, err := s.cpu()
		if err != nil {
			return Cost{}, err
		}
		if err := fn(); err != nil {
			return Cost{}, err
		}
		after, err := s.cpu()
		return Cost{CPU: after - before}, err
	}
	if err := s.control("--zero"); err != nil {
		return Cost{}, err
	}
	start := time.Now()
	if err := fn(); err != nil {
		return Cost{}, err
	}
	elapsed := time.Since(start)
	ir, dump, err := s.dump()
	if err != nil {
		return Cost{}, err
	}
	return Cost{Instructions: ir, Elapsed: elapsed, Dump: dump}, nil
}

// measureIdle counts the instructions of one idle second.
func (s *Server) measureIdle() error {
	if err := s.control("--zero"); err != nil {
		return err
	}
	start := time.Now()
	time.Sleep(time.Second)
	ir, _, err := s.dump()
	if err != nil {
		return err
	}
	s.idle = ir / time.Since(start).Seconds()
	return nil
}

// Idle returns the instructions per second the server runs when no command arrives, its cron
// left out: times a measurement's Elapsed, an upper bound on what in it no command caused.
func (s *Server) Idle() float64 { return s.idle }

// cpu is the server's CPU time so far, from INFO cpu.
func (s *Server) cpu() (time.Duration, error) {
	r, err := s.ctl.Do("INFO", "cpu")
	if err != nil {
		return 0, err
	}
	info, _ := r.(string)
	var total float64
	for _, f := range []string{"used_cpu_user:", "used_cpu_sys:"} {
		i := strings.Index(info, f)
		if i < 0 {
			return 0, fmt.Errorf("rediscpu: INFO cpu has no %s", f)
		}
		v := info[i+len(f):]
		v = v[:strings.IndexAny(v, "\r\n")]
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, fmt.Errorf("rediscpu: INFO cpu %s%s: %w", f, v, err)
		}
		total += x
	}
	return time.Duration(total * float64(time.Second)), nil
}

// control runs callgrind_control with one option on the server's valgrind process.
func (s *Server) control(opt string) error {
	out, err := exec.Command("callgrind_control", opt, strconv.Itoa(s.cmd.Process.Pid)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("rediscpu: callgrind_control %s: %w: %s", opt, err, out)
	}
	return nil
}

// dump writes a callgrind dump and returns its total instructions and its path.
func (s *Server) dump() (float64, string, error) {
	s.dumps++
	if err := s.control("--dump=m" + strconv.Itoa(s.dumps)); err != nil {
		return 0, "", err
	}
	// Dumps are numbered callgrind.out.<n> in order; the newest is the one with our description.
	matches, _ := filepath.Glob(filepath.Join(s.Dir, "callgrind.out.*"))
	for _, m := range matches {
		ir, desc, err := readDump(m)
		if err == nil && desc == "m"+strconv.Itoa(s.dumps) {
			return ir, m, nil
		}
	}
	return 0, "", fmt.Errorf("rediscpu: no callgrind dump m%d in %s", s.dumps, s.Dir)
}

// readDump returns a dump's total Ir (its "summary:" or "totals:" line) and its description
// (the "desc: Trigger: Client Request: <desc>" line).
func readDump(path string) (float64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	var ir float64
	var desc string
	found := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "desc: Trigger:"):
			desc = line[strings.LastIndex(line, " ")+1:]
		case strings.HasPrefix(line, "summary:"), strings.HasPrefix(line, "totals:"):
			if fields := strings.Fields(line); len(fields) > 1 {
				if ir, err = strconv.ParseFloat(fields[1], 64); err == nil {
					found = true
				}
			}
		}
	}
	if !found {
		return 0, desc, errors.New("rediscpu: dump without a total")
	}
	return ir, desc, sc.Err()
}

// Close stops the server (its process group) and removes Dir unless the server was started with
// keep.
func (s *Server) Close() error {
	if s.ctl != nil {
		s.ctl.Close()
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	if !s.keep {
		return os.RemoveAll(s.Dir)
	}
	return nil
}
