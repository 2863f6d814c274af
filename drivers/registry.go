package drivers

import (
	"fmt"
	"sort"
	"sync"
)

var (
	registryMu sync.RWMutex
	registry   = map[string]Driver{}
	// controls are the negative controls: drivers broken on purpose, found by Get but left out
	// of Names, so that nothing that runs "every driver" runs them by accident.
	controls = map[string]Driver{}
	// references are reference measurements that are not locks (the floor): found by Get, left
	// out of Names and Controls, for the same reason as the controls.
	references = map[string]Driver{}
)

// Register makes d available by its name. It panics on a duplicate name, which is a programming
// error caught at init time.
func Register(d Driver) { add(registry, "Register", d) }

// add puts d into m under its name, panicking if any list has the name already.
func add(m map[string]Driver, caller string, d Driver) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, l := range []map[string]Driver{registry, controls, references} {
		if _, dup := l[d.Name()]; dup {
			panic("drivers: " + caller + " called twice for " + d.Name())
		}
	}
	m[d.Name()] = d
}

// RegisterControl makes the negative control d available by its name to Get, and lists it in
// Controls, not in Names. It panics on a duplicate name.
func RegisterControl(d Driver) { add(controls, "RegisterControl", d) }

// RegisterReference makes the reference measurement d available by its name to Get, and lists
// it in References, not in Names. It panics on a duplicate name.
func RegisterReference(d Driver) { add(references, "RegisterReference", d) }

// References lists the reference measurements (see RegisterReference), sorted.
func References() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return sortedNames(references)
}

// Controls lists the negative controls (see RegisterControl), sorted.
func Controls() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return sortedNames(controls)
}

// Get returns the driver called name.
func Get(name string) (Driver, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	d, ok := registry[name]
	if !ok {
		d, ok = controls[name]
	}
	if !ok {
		d, ok = references[name]
	}
	if !ok {
		return nil, fmt.Errorf("unknown driver %q (known: %v; negative controls: %v; references: %v)", name, namesLocked(), sortedNames(controls), sortedNames(references))
	}
	return d, nil
}

// Names lists the registered drivers, sorted, without the negative controls.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return namesLocked()
}

func namesLocked() []string { return sortedNames(registry) }

func sortedNames(m map[string]Driver) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
