package drivers

import (
	"fmt"
	"sync"
)

// A Scheme parses driver specs that name no registered driver but a kind of driver made from
// the spec itself: "exec:NAME=COMMAND" starts an adapter process (package extdriver). The
// package that owns a scheme registers it in init, so that drivers need not import it.
type Scheme func(spec string) (Driver, error)

var (
	schemesMu sync.RWMutex
	schemes   = map[string]Scheme{}
)

// RegisterScheme makes Parse hand every spec "prefix:…" to parse, whole. It panics on a
// duplicate prefix or one that is a registered driver's name: a programming error caught at
// init time. Safe for concurrent use.
func RegisterScheme(prefix string, parse Scheme) {
	schemesMu.Lock()
	defer schemesMu.Unlock()
	if _, dup := schemes[prefix]; dup {
		panic("drivers: RegisterScheme called twice for " + prefix)
	}
	if _, err := Get(prefix); err == nil {
		panic(fmt.Sprintf("drivers: scheme %q is a driver's name", prefix))
	}
	schemes[prefix] = parse
}

// scheme returns the Scheme registered for prefix, or nil.
func scheme(prefix string) Scheme {
	schemesMu.RLock()
	defer schemesMu.RUnlock()
	return schemes[prefix]
}
