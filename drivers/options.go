package drivers

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrBadOption is wrapped by Parse's errors about a driver option: an unknown key, a bad value,
// options for a driver that takes none. It is the user's input to fix, not a failure.
var ErrBadOption = errors.New("drivers: bad driver option")

// Configurable is a Driver that takes options from the command line ("name:key=value:…"), so
// that one run can compare settings of one library side by side.
type Configurable interface {
	Driver
	// Options lists the keys the driver takes, each with its help text.
	Options() []Option
	// Configure returns the driver with opts applied (keys are among Options, each given once).
	// The returned driver's Name is spec, so results tell the settings apart; its Settings
	// record the values. Errors wrap ErrBadOption.
	Configure(spec string, opts map[string]string) (Driver, error)
}

// TopologyChecker is a Driver some of whose options apply on some topologies only.
type TopologyChecker interface {
	Driver
	// CheckTopology returns an error wrapping ErrBadOption when an option the driver was
	// configured with has no use on topology (single, sentinel, cluster or masters). Open
	// refuses the same; checked first, a run refuses it before it starts a deployment.
	CheckTopology(topology string) error
}

// CheckTopology checks the driver spec's options against topology, a --topology as users write
// it ("masters:3" is masters). Errors are Parse's, or wrap ErrBadOption. A driver whose options
// hold everywhere, or a topology of no known kind, passes: Open says the rest.
func CheckTopology(spec, topology string) error {
	d, err := Parse(spec)
	if err != nil {
		return err
	}
	tc, ok := d.(TopologyChecker)
	if !ok {
		return nil
	}
	kind, _, _ := strings.Cut(topology, ":")
	if kind == "" {
		kind = topoSingle
	}
	switch kind {
	case topoSingle, topoSentinel, topoCluster, topoMasters:
		return tc.CheckTopology(kind)
	}
	return nil
}

// Option is one key a Configurable driver takes.
type Option struct {
	Key  string
	Help string
}

// Parse returns the driver spec names: a registered driver's name, optionally followed by
// options, each ":key=value", e.g. "lockcore:handoff=0". Errors about options wrap
// ErrBadOption; an unknown name is Get's error. A spec whose name is a registered Scheme's prefix
// ("exec:…") is that Scheme's to parse, whole.
func Parse(spec string) (Driver, error) {
	name, rest, hasOpts := strings.Cut(spec, ":")
	if parse := scheme(name); parse != nil && hasOpts {
		return parse(spec)
	}
	d, err := Get(name)
	if err != nil || !hasOpts {
		return d, err
	}
	c, ok := d.(Configurable)
	if !ok {
		return nil, fmt.Errorf("%w: driver %s takes no options (in %q)", ErrBadOption, name, spec)
	}
	known := c.Options()
	opts := make(map[string]string)
	for _, kv := range strings.Split(rest, ":") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%w: %q in %q is not key=value; %s", ErrBadOption, kv, spec, optionList(name, known))
		}
		if !slices.ContainsFunc(known, func(o Option) bool { return o.Key == k }) {
			return nil, fmt.Errorf("%w: driver %s has no option %q; %s", ErrBadOption, name, k, optionList(name, known))
		}
		if _, dup := opts[k]; dup {
			return nil, fmt.Errorf("%w: option %q given twice in %q", ErrBadOption, k, spec)
		}
		opts[k] = v
	}
	return c.Configure(spec, opts)
}

// optionList says which options driver takes.
func optionList(driver string, known []Option) string {
	keys := make([]string, len(known))
	for i, o := range known {
		keys[i] = o.Key
	}
	return fmt.Sprintf("%s takes %s", driver, strings.Join(keys, ", "))
}

// OptionsHelp describes the options of every Configurable driver, for help text.
func OptionsHelp() string {
	var b strings.Builder
	for _, n := range Names() {
		d, _ := Get(n)
		c, ok := d.(Configurable)
		if !ok {
			continue
		}
		for _, o := range c.Options() {
			fmt.Fprintf(&b, "  %s:%s=…  %s\n", n, o.Key, o.Help)
		}
	}
	return b.String()
}
