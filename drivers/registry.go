package drivers

import (
	"fmt"
	"sort"
	"sync"
)

var (
	registryMu sync.RWMutex
	registry   = map[string]Driver{}
)

// Register makes d available by its name. It panics on a duplicate name, which is a programming
// error caught at init time.
func Register(d Driver) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[d.Name()]; dup {
		panic("drivers: Register called twice for " + d.Name())
	}
	registry[d.Name()] = d
}

// Get returns the driver called name.
func Get(name string) (Driver, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	d, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown driver %q (known: %v)", name, namesLocked())
	}
	return d, nil
}

// Names lists the registered drivers, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
