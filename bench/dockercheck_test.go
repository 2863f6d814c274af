package bench

import (
	"errors"
	"strings"
	"testing"
)

// DockerCheck refuses what generator containers cannot reach or read, naming the flag.
func TestDockerCheck(t *testing.T) {
	t.Parallel()
	ok := DockerCheck{Referee: NativeReferee, Addrs: []string{"10.0.0.5:6379"}}
	if err := ok.Check(); err != nil {
		t.Errorf("reachable addresses: %v", err)
	}
	for _, tc := range []struct {
		c    DockerCheck
		want string
	}{
		{DockerCheck{Secure: true}, "--generators docker with --auth or --tls"},
		{DockerCheck{Net: true}, "--net is not available"},
		{DockerCheck{Profiles: true}, "--cpuprofile and --trace"},
		{DockerCheck{Metrics: true}, "--metrics-addr is not available"},
		{DockerCheck{ConnArgs: []string{"--tls-ca-file=ca.crt"}}, "--generators docker with TLS files (--tls-ca-file)"},
		{DockerCheck{Referee: "127.0.0.1:6390"}, "--referee 127.0.0.1:6390 is on this host's loopback"},
		{DockerCheck{Referee: NativeReferee, Collect: "localhost:1"}, "--collect localhost:1 is on this host's loopback"},
		{DockerCheck{Referee: NativeReferee, Addrs: []string{"redis://localhost:6379"}}, "--addr redis://localhost:6379 is on this host's loopback"},
	} {
		if err := tc.c.Check(); !errors.Is(err, ErrBadSpec) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want ErrBadSpec, %q", tc.c, err, tc.want)
		}
	}
}

// CheckGeneratorImage refuses a bad reference; offline it asks no engine.
func TestCheckGeneratorImage(t *testing.T) {
	t.Parallel()
	if err := CheckGeneratorImage("Bad Ref", true); !errors.Is(err, ErrBadSpec) || !strings.HasPrefix(err.Error(), "--generator-image: ") {
		t.Errorf("bad reference: %v; want ErrBadSpec naming --generator-image", err)
	}
	if err := CheckGeneratorImage("lockbench/lockbench:local", true); err != nil {
		t.Errorf("offline, a good reference: %v", err)
	}
}
