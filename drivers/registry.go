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
)

// Register makes d available by its name. It panics on a duplicate name, which is a programming
// error caught at init time.
func Register(d Driver) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[d.Name()]; dup {
		panic("drivers: Register called twice for " + d.Name())
	}
	if _, dup := controls[d.Name()]; dup {
		panic("drivers: Register called twice for " + d.Name())
	}
	registry[d.Name()] = d
}

// RegisterControl makes the negative control d available by its name to Get, and lists it in
// Controls, not in Names. It panics on a duplicate name.
func RegisterControl(d Driver) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[d.Name()]; dup {
		panic("drivers: RegisterControl called twice for " + d.Name())
	}
	if _, dup := controls[d.Name()]; dup {
		panic("drivers: RegisterControl called twice for " + d.Name())
	}
	controls[d.Name()] = d
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
		return nil, fmt.Errorf("unknown driver %q (known: %v; negative controls: %v)", name, namesLocked(), sortedNames(controls))
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
