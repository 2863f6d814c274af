package compose

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
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

// DefaultTopologyStartTimeout is what a zero NativeOptions.StartTimeout means for a sentinel
// or cluster start, which bounds the whole start: besides starting processes it waits for
// replication, sentinel discovery (hello messages every 2 s) and cluster gossip to settle.
const DefaultTopologyStartTimeout = 30 * time.Second

// Start starts the topology spec names as native processes (see NativeOptions), with
// DefaultMasterName for a sentinel spec that names none. ctx bounds only the start. On failure
// nothing is left running. Start is safe for concurrent use; each call starts its own servers.
func Start(ctx context.Context, spec Spec, opt NativeOptions) (Topology, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	// Each case returns its own concrete type, so a failed start must not become a non-nil
	// Topology holding a nil pointer.
	switch spec.Kind {
	case KindSingle:
		s, err := StartSingle(ctx, opt)
		if err != nil {
			return nil, err
		}
		return s, nil
	case KindSentinel:
		s, err := StartSentinel(ctx, opt, spec.masterName())
		if err != nil {
			return nil, err
		}
		return s, nil
	case KindCluster:
		c, err := StartCluster(ctx, opt)
		if err != nil {
			return nil, err
		}
		return c, nil
	default: // KindMasters, as validate checked
		m, err := StartMasters(ctx, opt, spec.Masters)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}

// masterName returns the sentinel master name spec asks for, or DefaultMasterName.
func (s Spec) masterName() string {
	if s.MasterName == "" {
		return DefaultMasterName
	}
	return s.MasterName
}

// validate checks a Spec built by hand rather than by ParseSpec. Errors wrap ErrBadSpec.
func (s Spec) validate() error {
	switch s.Kind {
	case KindSingle, KindCluster:
	case KindSentinel:
		return checkMasterName(s.masterName())
	case KindMasters:
		if s.Masters < 1 || s.Masters > MaxMasters {
			return fmt.Errorf("%w %q: masters:N needs N from 1 to %d", ErrBadSpec, s.String(), MaxMasters)
		}
	default:
		return fmt.Errorf("%w %q: want single, sentinel, cluster or masters:N", ErrBadSpec, s.Kind)
	}
	return nil
}

// checkMasterName accepts the names a sentinel config line and command take safely: letters,
// digits, '.', '_' and '-'.
func checkMasterName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("%w: sentinel master name %q: want 1 to 128 characters", ErrBadSpec, name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("%w: sentinel master name %q: use only letters, digits, '.', '_' and '-'", ErrBadSpec, name)
		}
	}
	return nil
}
