package kept

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/compose"
	"github.com/lockbench/lockbench/pin"
	"github.com/lockbench/lockbench/target"
)

// ErrBadOptions is wrapped by the errors of UpFlags.Options: options an Up cannot start.
var ErrBadOptions = errors.New("bad up options")

// UpFlags are the UpOptions as lockbench up's flags give them, before they are checked:
// Topology in compose.ParseSpec syntax, MasterName, and CPUs a taskset list (1, 2-3, 1,3).
// Given reports whether the flag of that name was set ("master-name", "image", "server-cpus").
type UpFlags struct {
	Topology, MasterName string
	Provider, Image      string
	Name, Dir            string
	Auth, TLS            bool
	CPUs                 string
	Given                func(flag string) bool
}

// Options checks f and returns the UpOptions it gives, a sentinel topology's master name
// defaulted to compose.DefaultMasterName. The error wraps ErrBadOptions; its text names the
// flag, as lockbench up prints it.
func (f UpFlags) Options() (UpOptions, error) {
	bad := func(format string, a ...any) (UpOptions, error) {
		return UpOptions{}, &upError{fmt.Sprintf(format, a...)}
	}
	spec, err := compose.ParseSpec(f.Topology)
	if err != nil {
		return bad("--topology: %v", err)
	}
	if f.Given("master-name") {
		if spec.Kind != compose.KindSentinel {
			return bad("--master-name is for --topology sentinel, not %s", spec)
		}
		if strings.TrimSpace(f.MasterName) == "" || strings.ContainsAny(f.MasterName, " \t\r\n") {
			return bad("--master-name %q: want a name without spaces", f.MasterName)
		}
		spec.MasterName = f.MasterName
	}
	if spec.Kind == compose.KindSentinel && spec.MasterName == "" {
		spec.MasterName = compose.DefaultMasterName
	}
	if err := target.CheckProvider(f.Provider, f.Image, false, f.Given); err != nil {
		return bad("%v", err)
	}
	if err := CheckName(f.Name); err != nil {
		return bad("--%v", err)
	}
	o := UpOptions{Dir: f.Dir, Name: f.Name, Provider: f.Provider, Image: f.Image, Topology: spec, Auth: f.Auth, TLS: f.TLS}
	if f.Given("server-cpus") {
		avail, err := pin.Available()
		if err != nil {
			return bad("%v", err)
		}
		if o.CPUs, err = pin.ParseUsable(f.CPUs, avail); errors.Is(err, pin.ErrNotAvailable) {
			return bad("--server-cpus %v", err)
		} else if err != nil {
			return bad("--server-cpus: %v", err)
		}
	}
	if f.Dir == "" {
		return bad("--state-dir must not be empty")
	}
	return o, nil
}

// upError is an error of UpFlags.Options: its text is the complaint alone.
type upError struct{ msg string }

func (e *upError) Error() string { return e.msg }
func (e *upError) Unwrap() error { return ErrBadOptions }
