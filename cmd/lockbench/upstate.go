package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/compose"
)

// The state file: one JSON file per `lockbench up --name`, in the state dir. It is how down and
// status find a running up, its topology and its processes. up writes it (atomically: a reader
// never sees half a file) and removes it when it stops; down removes it when up is gone.

// defaultUpName is the --name of up, down and status when none is given.
const defaultUpName = "default"

// upState is the content of one state file.
type upState struct {
	// Name is the --name of the up that wrote the file; the file is <Name>.json.
	Name string `json:"name"`
	// Pid is the process id of the `lockbench up` process that owns the topology.
	Pid int `json:"pid"`
	// Provider is native or docker.
	Provider string `json:"provider"`
	// Topology is the spec as ParseSpec reads it, e.g. "masters:3".
	Topology string `json:"topology"`
	// Started is when up started.
	Started time.Time `json:"started"`
	// Ready is when the topology answered; zero while it is starting.
	Ready time.Time `json:"ready,omitzero"`
	// Addrs are the addresses clients dial (the sentinels for sentinel); empty while starting.
	Addrs []string `json:"addrs,omitempty"`
	// Description lists every node and its role; nil while starting.
	Description *compose.Description `json:"description,omitempty"`
	// NodePids are the node processes of a native topology, for down to check they are gone.
	NodePids []int `json:"node_pids,omitempty"`
	// Secure is how clients connect to a topology started with --auth or --tls; nil without.
	Secure *upSecure `json:"secure,omitempty"`
}

// upSecure is where the credentials of a topology started with --auth or --tls are: files,
// never the password itself.
type upSecure struct {
	// User and PasswordFile are the ACL user and the file with its password (--auth).
	User         string `json:"user,omitempty"`
	PasswordFile string `json:"password_file,omitempty"`
	// TLS says the nodes speak TLS only; CAFile is the CA that signed their certificates.
	TLS    bool   `json:"tls,omitempty"`
	CAFile string `json:"ca_file,omitempty"`
	// ServerName is the name clients check in the nodes' certificates (docker provider).
	ServerName string `json:"server_name,omitempty"`
}

// errUpRunning is returned by claimState when a live up already owns the name.
var errUpRunning = errors.New("already running")

// defaultStateDir is $XDG_RUNTIME_DIR/lockbench (per user, cleared at logout) or, without one,
// <tmp>/lockbench-<uid> so that two users of one machine do not share state.
func defaultStateDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "lockbench")
	}
	return filepath.Join(os.TempDir(), "lockbench-"+strconv.Itoa(os.Getuid()))
}

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// checkName refuses names that are not plain file names: a name becomes <dir>/<name>.json.
func checkName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("--name %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

func statePath(dir, name string) string { return filepath.Join(dir, name+".json") }

// claimState creates the state file for st.Name, failing with errUpRunning (wrapped, with the
// owner's state) if a live up owns it. A file left by an up that is gone is replaced. Creation
// is exclusive (a hard link of a complete temp file), so of two ups racing for a name one wins.
func claimState(dir string, st upState) (upState, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return upState{}, fmt.Errorf("state dir: %w", err)
	}
	path := statePath(dir, st.Name)
	tmp, err := writeTemp(dir, st)
	if err != nil {
		return upState{}, err
	}
	defer os.Remove(tmp)
	for attempt := 0; attempt < 3; attempt++ {
		err := os.Link(tmp, path)
		if err == nil {
			return upState{}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return upState{}, fmt.Errorf("state file: %w", err)
		}
		old, rerr := readState(path)
		if rerr == nil && upAlive(old.Pid) {
			return old, fmt.Errorf("a topology named %q is %w (pid %d, %s, started %s)",
				st.Name, errUpRunning, old.Pid, old.Topology, old.Started.Format(time.DateTime))
		}
		// Stale (its up is gone) or unreadable: it is ours to replace.
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return upState{}, fmt.Errorf("remove stale state file: %w", err)
		}
	}
	return upState{}, fmt.Errorf("state file %s: kept losing the race to create it", path)
}

// writeState replaces the state file atomically (rename of a complete temp file).
func writeState(dir string, st upState) error {
	tmp, err := writeTemp(dir, st)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, statePath(dir, st.Name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("state file: %w", err)
	}
	return nil
}

func writeTemp(dir string, st upState) (string, error) {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, ".up-*.tmp")
	if err != nil {
		return "", fmt.Errorf("state file: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("state file: %w", err)
	}
	return f.Name(), nil
}

func readState(path string) (upState, error) {
	var st upState
	b, err := os.ReadFile(path)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, fmt.Errorf("state file %s: %w", path, err)
	}
	if st.Pid <= 0 || st.Name == "" {
		return st, fmt.Errorf("state file %s: no name or pid", path)
	}
	return st, nil
}

// stateFiles returns the state files in dir, sorted by name; a missing dir has none.
func stateFiles(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	return paths, nil
}

// upAlive reports whether pid is a running `lockbench up`. A pid that exists but runs something
// else was recycled after our up died: it is not alive for us, and nobody signals it.
func upAlive(pid int) bool {
	args := cmdline(pid)
	if len(args) == 0 { // gone, a zombie, or not ours to see
		return false
	}
	self, _ := os.Executable()
	base := filepath.Base(args[0])
	if !strings.Contains(base, "lockbench") && (self == "" || base != filepath.Base(self)) {
		return false
	}
	return slices.Contains(args[1:], "up")
}

// nodeAlive reports whether pid is still a redis process started for st: its command line
// names redis and one of st's node ports. A recorded node pid that now runs anything else was
// recycled and is left alone.
func nodeAlive(st upState, pid int) bool {
	args := cmdline(pid)
	if len(args) == 0 || !strings.Contains(filepath.Base(args[0]), "redis") {
		return false
	}
	if st.Description == nil {
		return true
	}
	line := " " + strings.Join(args, " ") + " "
	for _, n := range st.Description.Nodes {
		// Native servers get "--port N" on their command line; redis-server shows
		// "*:N" or "host:N" in its process title.
		if _, port, err := net.SplitHostPort(n.Addr); err == nil &&
			(strings.Contains(line, " "+port+" ") || strings.Contains(line, ":"+port+" ")) {
			return true
		}
	}
	return false
}

// cmdline returns the command line of a live process, or nil when it is gone or a zombie.
// Linux has /proc; elsewhere ps answers.
func cmdline(pid int) []string {
	if pid <= 0 {
		return nil
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err == nil {
		// A zombie's cmdline is empty, which reads as gone: it has ended, only unreaped.
		return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	}
	if _, serr := os.Stat("/proc/self/cmdline"); serr == nil {
		return nil // /proc works, so the process is gone
	}
	out, err := exec.Command("ps", "-ww", "-o", "stat=", "-o", "command=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		return nil
	}
	fields := strings.Fields(string(bytes.TrimSpace(out)))
	if len(fields) < 2 || strings.HasPrefix(fields[0], "Z") {
		return nil
	}
	return fields[1:]
}

// signalProcess sends sig to pid if check still holds for it. On Linux os.FindProcess holds a
// pidfd, so a pid recycled between the check and the signal gets nothing.
func signalProcess(pid int, sig syscall.Signal, check func(int) bool) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	if !check(pid) {
		return os.ErrProcessDone
	}
	return p.Signal(sig)
}
