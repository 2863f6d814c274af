// Package kept is the registry of the topologies `lockbench up` keeps running for other
// tools: one JSON state file per name in a state directory, saying which process owns the
// topology, its nodes and how to connect. An Up claims a name, starts the topology and writes
// its file (lockbench up); Stop stops the owner of a file (lockbench down); Check finds
// whether the owner runs and PINGs its nodes (lockbench status). The liveness checks tell a
// live owner from a dead one whose pid was recycled.
package kept

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/compose"
)

// DefaultName is the name of a kept topology when none is given.
const DefaultName = "default"

// State is the content of one state file. up writes it atomically (a reader never sees half a
// file) and removes it when it stops; down removes it when up is gone.
type State struct {
	// Name is the name of the up that wrote the file; the file is <Name>.json.
	Name string `json:"name"`
	// Pid is the process id of the `lockbench up` process that owns the topology.
	Pid int `json:"pid"`
	// Provider is native or docker.
	Provider string `json:"provider"`
	// Topology is the spec as compose.ParseSpec reads it, e.g. "masters:3".
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
	// Secure is how clients connect to a topology started with an ACL user or TLS; nil without.
	Secure *Secure `json:"secure,omitempty"`
}

// Secure is where the credentials of a topology started with an ACL user or TLS are: files,
// never the password itself.
type Secure struct {
	// User and PasswordFile are the ACL user and the file with its password.
	User         string `json:"user,omitempty"`
	PasswordFile string `json:"password_file,omitempty"`
	// TLS says the nodes speak TLS only; CAFile is the CA that signed their certificates.
	TLS    bool   `json:"tls,omitempty"`
	CAFile string `json:"ca_file,omitempty"`
	// ServerName is the name clients check in the nodes' certificates (docker provider).
	ServerName string `json:"server_name,omitempty"`
}

// ErrRunning is wrapped by Claim's error when a live up already owns the name.
var ErrRunning = errors.New("already running")

// DefaultDir is $XDG_RUNTIME_DIR/lockbench (per user, cleared at logout) or, without one,
// <tmp>/lockbench-<uid> so that two users of one machine do not share state.
func DefaultDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "lockbench")
	}
	return filepath.Join(os.TempDir(), "lockbench-"+strconv.Itoa(os.Getuid()))
}

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ValidName reports whether name is a plain file name of 1 to 64 letters, digits, '.', '_' or
// '-', starting with a letter or digit: a name becomes <dir>/<name>.json.
func ValidName(name string) bool { return validName.MatchString(name) }

// ErrBadName is wrapped by CheckName's error.
var ErrBadName = errors.New("bad name")

// CheckName says what is wrong with a name that is not ValidName: `name "x/y": use 1 to 64
// letters, …`. Its error wraps ErrBadName.
func CheckName(name string) error {
	if !ValidName(name) {
		return &nameError{name}
	}
	return nil
}

// nameError is ErrBadName with a message that says what a name may be.
type nameError struct{ name string }

func (e *nameError) Error() string {
	return fmt.Sprintf("name %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", e.name)
}

func (e *nameError) Unwrap() error { return ErrBadName }

// Path is the state file of name in dir.
func Path(dir, name string) string { return filepath.Join(dir, name+".json") }

// SecretsPath is the directory of the password and certificates of the topology named name.
func SecretsPath(dir, name string) string { return filepath.Join(dir, name+".secrets") }

// NameOf is the name whose state file is path.
func NameOf(path string) string { return strings.TrimSuffix(filepath.Base(path), ".json") }

// Claim creates the state file for st.Name in dir (made 0700 if missing), failing with
// ErrRunning (wrapped, with the owner's state) if a live up owns it. A file left by an up that
// is gone is replaced. Creation is exclusive (a hard link of a complete temp file), so of two
// ups racing for a name one wins.
func Claim(dir string, st State) (State, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return State{}, fmt.Errorf("state dir: %w", err)
	}
	path := Path(dir, st.Name)
	tmp, err := writeTemp(dir, st)
	if err != nil {
		return State{}, err
	}
	defer os.Remove(tmp)
	for attempt := 0; attempt < 3; attempt++ {
		err := os.Link(tmp, path)
		if err == nil {
			return State{}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return State{}, fmt.Errorf("state file: %w", err)
		}
		old, rerr := Read(path)
		if rerr == nil && UpAlive(old.Pid) {
			return old, fmt.Errorf("a topology named %q is %w (pid %d, %s, started %s)",
				st.Name, ErrRunning, old.Pid, old.Topology, old.Started.Format(time.DateTime))
		}
		// Stale (its up is gone) or unreadable: it is ours to replace.
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return State{}, fmt.Errorf("remove stale state file: %w", err)
		}
	}
	return State{}, fmt.Errorf("state file %s: kept losing the race to create it", path)
}

// Write replaces the state file of st.Name atomically (rename of a complete temp file).
func Write(dir string, st State) error {
	tmp, err := writeTemp(dir, st)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, Path(dir, st.Name)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("state file: %w", err)
	}
	return nil
}

func writeTemp(dir string, st State) (string, error) {
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

// Read reads the state file at path. A missing file's error wraps fs.ErrNotExist; a file that
// is not a state file (no name or pid) is an error too.
func Read(path string) (State, error) {
	var st State
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

// Files returns the state files in dir, sorted by name; a missing dir has none.
func Files(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	return paths, nil
}
