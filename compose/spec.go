package compose

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// DefaultMasterName is the name a started sentinel topology gives its master, and the name
// attaching to a sentinel deployment assumes when none is given. It is Redis's own example name.
const DefaultMasterName = "mymaster"

// MaxMasters bounds masters:N, so a typo cannot start thousands of processes.
const MaxMasters = 16

// ErrBadSpec is wrapped by ParseSpec's errors: the topology text is not one lockbench knows.
var ErrBadSpec = errors.New("compose: bad topology")

// Spec says which topology to start: what --topology names.
type Spec struct {
	// Kind is KindSingle, KindSentinel, KindCluster or KindMasters.
	Kind string
	// Masters is N for KindMasters; 0 otherwise.
	Masters int
	// MasterName is the sentinel master name for KindSentinel; default DefaultMasterName.
	MasterName string
}

// String returns the spec as ParseSpec reads it, e.g. "masters:5".
func (s Spec) String() string {
	if s.Kind == KindMasters {
		return KindMasters + ":" + strconv.Itoa(s.Masters)
	}
	return s.Kind
}

// ParseSpec reads a topology as users write it: single, sentinel, cluster or masters:N
// (1 ≤ N ≤ MaxMasters). Errors wrap ErrBadSpec and say what is accepted.
func ParseSpec(text string) (Spec, error) {
	switch text {
	case KindSingle, KindSentinel, KindCluster:
		return Spec{Kind: text}, nil
	}
	if n, ok := strings.CutPrefix(text, KindMasters+":"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 1 || v > MaxMasters {
			return Spec{}, fmt.Errorf("%w %q: masters:N needs N from 1 to %d", ErrBadSpec, text, MaxMasters)
		}
		return Spec{Kind: KindMasters, Masters: v}, nil
	}
	return Spec{}, fmt.Errorf("%w %q: want single, sentinel, cluster or masters:N", ErrBadSpec, text)
}

// Start starts the topology spec names as native processes (see NativeOptions). ctx bounds only
// the start. On failure nothing is left running.
func Start(ctx context.Context, spec Spec, opt NativeOptions) (Topology, error) {
	switch spec.Kind {
	case KindSingle:
		return StartSingle(ctx, opt)
	default:
		return nil, fmt.Errorf("%w %q: not implemented yet", ErrBadSpec, spec.Kind)
	}
}
