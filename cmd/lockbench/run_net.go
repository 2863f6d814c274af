package main

import (
	"strings"

	"github.com/lockbench/lockbench/netem"
	"github.com/spf13/pflag"
)

// netFlag is --net: network conditions between the clients and Redis (see package netem).
type netFlag struct {
	spec string
	cond *netem.Conditions // nil: clients dial Redis directly
}

func (n *netFlag) add(fs *pflag.FlagSet) {
	fs.StringVar(&n.spec, "net", "", "put network conditions between every client connection and Redis, through in-process proxies lockbench starts (toxiproxy): "+netem.Grammar+
		"; works on started and attached (--addr) deployments; lockbench's own INFO and cleanup connections go direct")
}

// check parses --net if it was given, and returns the message for a bad spec, or "".
func (n *netFlag) check(fs *pflag.FlagSet) string {
	if !fs.Changed("net") {
		return ""
	}
	c, err := netem.Parse(n.spec)
	if err != nil {
		return "--net: " + strings.TrimPrefix(err.Error(), netem.ErrSpec.Error()+": ")
	}
	n.cond = &c
	return ""
}

// String is the conditions as results record them ("latency=1ms"), or "" without --net.
func (n *netFlag) String() string {
	if n.cond == nil {
		return ""
	}
	return n.cond.String()
}
