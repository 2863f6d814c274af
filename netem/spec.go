package netem

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrSpec is wrapped by the errors Parse returns for a spec it cannot read.
var ErrSpec = errors.New("netem: bad network spec")

// MaxLatency bounds latency and jitter in a spec: more is a typo, not a network.
const MaxLatency = 10 * time.Second

// Conditions are the network conditions a Net puts on every connection. The zero value adds
// nothing but the proxy's own cost. It is a plain value and safe for concurrent use.
type Conditions struct {
	// Latency delays every byte by this much in each direction, so a round trip takes
	// 2 × Latency longer. 0 to MaxLatency.
	Latency time.Duration
	// Jitter varies each delay uniformly within ±Jitter around Latency; bytes still arrive in
	// the order they were sent, as on a TCP connection. 0 to Latency.
	Jitter time.Duration
}

// RoundTrip is the time the conditions add to one request and its reply.
func (c Conditions) RoundTrip() time.Duration { return 2 * c.Latency }

// String is the spec Parse reads back to c, in canonical form ("latency=1ms,jitter=200us");
// equal conditions give equal strings.
func (c Conditions) String() string {
	s := "latency=" + durText(c.Latency)
	if c.Jitter > 0 {
		s += ",jitter=" + durText(c.Jitter)
	}
	return s
}

// durText is d as time.Duration writes it, with "us" for "µs" so that the text can be typed.
func durText(d time.Duration) string { return strings.Replace(d.String(), "µs", "us", 1) }

// Grammar describes the spec Parse reads, for help texts.
const Grammar = "comma-separated key=value: latency=DURATION (one way, added in each direction: a round trip gains twice it), jitter=DURATION (delays vary uniformly within ±jitter, at most latency); e.g. latency=1ms,jitter=200us"

// Parse reads a network spec: comma-separated key=value pairs, each key at most once.
//
//	latency=DURATION  one-way delay added in each direction (Go duration: 1ms, 500us), 0 to 10s
//	jitter=DURATION   each delay varies uniformly within ±jitter; 0 to latency
//
// latency is required. Errors wrap ErrSpec and say which part is wrong.
func Parse(spec string) (Conditions, error) {
	var c Conditions
	if strings.TrimSpace(spec) == "" {
		return c, fmt.Errorf("%w: empty; want e.g. latency=1ms,jitter=200us", ErrSpec)
	}
	seen := map[string]bool{}
	for part := range strings.SplitSeq(spec, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || key == "" || val == "" {
			return Conditions{}, fmt.Errorf("%w: %q: want key=value, e.g. latency=1ms", ErrSpec, part)
		}
		if seen[key] {
			return Conditions{}, fmt.Errorf("%w: %s given twice", ErrSpec, key)
		}
		seen[key] = true
		switch key {
		case "latency", "jitter":
			d, err := time.ParseDuration(val)
			if err != nil || d < 0 || d > MaxLatency {
				return Conditions{}, fmt.Errorf("%w: %s=%s: want a duration from 0 to %v, e.g. 1ms or 500us", ErrSpec, key, val, MaxLatency)
			}
			if key == "latency" {
				c.Latency = d
			} else {
				c.Jitter = d
			}
		default:
			return Conditions{}, fmt.Errorf("%w: unknown key %q (known: latency, jitter)", ErrSpec, key)
		}
	}
	if !seen["latency"] {
		return Conditions{}, fmt.Errorf("%w: %q has no latency; want e.g. latency=1ms", ErrSpec, spec)
	}
	if c.Jitter > c.Latency {
		return Conditions{}, fmt.Errorf("%w: jitter %v is more than latency %v: a delay cannot be negative", ErrSpec, durText(c.Jitter), durText(c.Latency))
	}
	return c, nil
}
