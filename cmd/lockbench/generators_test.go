package main

import (
	"strings"
	"testing"
)

// Bad input for --generators, refused before anything starts (exit 2).
func TestGeneratorsBadInput(t *testing.T) {
	cases := []struct {
		args []string
		env  string
		out  string
	}{
		{[]string{"run", "--generators", "ssh"}, "", `--generators "ssh"`},
		{[]string{"run", "--generator-cpus", "0"}, "", "are for --generators docker"},
		{[]string{"run", "--generators", "docker", "--addr", "127.0.0.1:6379"}, "", "loopback"},
		{[]string{"run", "--generators", "docker", "--addr", "redis://localhost:6379"}, "", "loopback"},
		{[]string{"run", "--generators", "docker", "--provider", "docker", "--topology", "cluster"}, "", "host's network"},
		{[]string{"run", "--generators", "docker", "--referee", "127.0.0.1:6390"}, "", "--referee 127.0.0.1:6390 is on this host's loopback"},
		{[]string{"run", "--generators", "docker", "--procs", "2", "--collect", "localhost:6391"}, "", "--collect localhost:6391 is on this host's loopback"},
		{[]string{"run", "--generators", "docker"}, "unix:///nonexistent/docker.sock", "no Docker engine"},
	}
	for _, c := range cases {
		if c.env != "" {
			t.Setenv("DOCKER_HOST", c.env)
		}
		// Short and with nothing written, should a check ever let one through.
		args := append(c.args, "--duration", "50ms", "--warmup", "0s", "--no-results")
		code, _, errs := lockbenchIn(args...)
		if code != exitUsage || !strings.Contains(errs, c.out) {
			t.Errorf("lockbench %v (DOCKER_HOST=%s): exit %d, stderr %q; want %d and %q", c.args, c.env, code, errs, exitUsage, c.out)
		}
	}
}
