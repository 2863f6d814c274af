package kept

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"
)

// WriteSummary writes what a started topology is, one "key value" line each, for people and
// for scripts (awk '$1=="addr"{print $2}'): what lockbench up prints on stdout. st must be
// ready (Description set).
func (st State) WriteSummary(w io.Writer) {
	fmt.Fprintf(w, "name        %s\n", st.Name)
	fmt.Fprintf(w, "topology    %s\n", st.Topology)
	for _, n := range st.Description.Nodes {
		fmt.Fprintf(w, "node        %s %s\n", n.Addr, n.Role)
	}
	fmt.Fprintf(w, "addr        %s\n", strings.Join(st.Addrs, ","))
	if st.Description.MasterName != "" {
		fmt.Fprintf(w, "master-name %s\n", st.Description.MasterName)
	}
	fmt.Fprintf(w, "run         %s\n", st.RunLine())
}

// WriteStatus writes the status of the kept topologies in dir to w, as lockbench status shows
// it: only name's when name is not "", every one's otherwise, or "nothing running". Each node
// has timeout to answer PING. It reports whether every up shown runs and every node answers;
// the error is a state directory that cannot be listed.
func WriteStatus(w io.Writer, dir, name string, timeout time.Duration) (healthy bool, err error) {
	paths, err := Files(dir)
	if err != nil {
		return false, err
	}
	if name != "" {
		paths = []string{Path(dir, name)}
	}
	healthy, shown := true, 0
	for _, p := range paths {
		st, err := Read(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		shown++
		if err != nil {
			fmt.Fprintf(w, "%s  unreadable state file: %v\n", NameOf(p), err)
			healthy = false
			continue
		}
		healthy = writeOne(w, st, timeout) && healthy
	}
	if shown == 0 {
		if name != "" {
			fmt.Fprintf(w, "nothing running as %q\n", name)
		} else {
			fmt.Fprintln(w, "nothing running")
		}
		return true, nil
	}
	return healthy, nil
}

// writeOne writes one topology's status and reports whether its up runs and every node answers.
func writeOne(w io.Writer, st State, timeout time.Duration) bool {
	h := Check(st, timeout)
	head := fmt.Sprintf("%s  %s  %s  pid %d", st.Name, st.Topology, st.Provider, st.Pid)
	switch h.Phase {
	case Dead:
		fmt.Fprintf(w, "%s  STALE: the up process is gone; 'lockbench down --name %s' cleans up\n", head, st.Name)
		return false
	case Starting:
		fmt.Fprintf(w, "%s  starting for %v\n", head, time.Since(st.Started).Round(time.Second))
		return false
	}
	fmt.Fprintf(w, "%s  up %v\n", head, time.Since(st.Ready).Round(time.Second))
	for i, n := range st.Description.Nodes {
		state := "ok"
		if err := h.Nodes[i]; err != nil {
			state = fmt.Sprintf("DOWN (%v)", err)
		}
		fmt.Fprintf(w, "  %-21s %-8s %s\n", n.Addr, n.Role, state)
	}
	fmt.Fprintf(w, "  addr %s\n", strings.Join(st.Addrs, ","))
	fmt.Fprintf(w, "  run  %s\n", st.RunLine())
	return h.OK()
}

// StopAll stops the kept topologies in dir (Stop, each with timeout): name's, or with all every
// one, as lockbench down does. It writes what it stopped to w, one line each, or "nothing
// running". The error joins what could not be stopped (each wraps ErrNotStopped, or is a state
// directory that cannot be listed); the others are stopped all the same.
func StopAll(w io.Writer, dir, name string, all bool, timeout time.Duration) error {
	var paths []string
	if all {
		var err error
		if paths, err = Files(dir); err != nil {
			return err
		}
	} else if _, err := os.Stat(Path(dir, name)); err == nil {
		paths = []string{Path(dir, name)}
	}
	if len(paths) == 0 {
		if all {
			fmt.Fprintln(w, "nothing running")
		} else {
			fmt.Fprintf(w, "nothing running as %q\n", name)
		}
		return nil
	}
	var errs []error
	for _, p := range paths {
		stopping, err := Stop(p, timeout)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintln(w, stopping)
	}
	return errors.Join(errs...)
}
