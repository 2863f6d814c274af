package netem

import (
	"strings"

	"github.com/spf13/pflag"
)

// Flag is --net as lockbench's commands take it: the network conditions between the clients
// and Redis. Register it, parse, then Check. A Flag is used by one goroutine.
type Flag struct {
	spec string
	// Conditions are the parsed conditions after Check; nil: clients dial Redis directly.
	Conditions *Conditions
}

// Register adds --net to fs.
func (n *Flag) Register(fs *pflag.FlagSet) {
	fs.StringVar(&n.spec, "net", "", "put network conditions between every client connection and Redis, through in-process proxies lockbench starts (toxiproxy): "+Grammar+
		"; works on started and attached (--addr) deployments; lockbench's own INFO and cleanup connections go direct")
}

// Check parses --net if fs says it was given. The error wraps ErrSpec; its text names the flag
// and what is wrong, without ErrSpec's own.
func (n *Flag) Check(fs *pflag.FlagSet) error {
	if !fs.Changed("net") {
		return nil
	}
	c, err := Parse(n.spec)
	if err != nil {
		return flagError("--net: " + strings.TrimPrefix(err.Error(), ErrSpec.Error()+": "))
	}
	n.Conditions = &c
	return nil
}

// String is the conditions as results record them ("latency=1ms"), or "" without --net.
func (n *Flag) String() string {
	if n.Conditions == nil {
		return ""
	}
	return n.Conditions.String()
}

// flagError is a complaint about --net: its text alone, wrapping ErrSpec.
type flagError string

func (e flagError) Error() string        { return string(e) }
func (e flagError) Is(target error) bool { return target == ErrSpec }
