package docker

import (
	"context"
	"crypto/tls"
	"io"
)

// Command lets the external tests probe nodes the way Start does.
var Command = command

// CommandSecure probes a node the way Start does for a topology with TLS and an ACL user:
// over TLS (certificate not checked) when useTLS, logged in as user when it is not "".
func CommandSecure(ctx context.Context, addr string, useTLS bool, user, password string, args ...string) (string, error) {
	p := probe{user: user, password: password}
	if useTLS {
		p.tls = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the test's own container
	}
	return p.command(ctx, addr, args...)
}

// ServerCommand is the command line and files of a data node of a topology started with opts.
func ServerCommand(opts Options) (cmd []string, files map[string]string, err error) {
	s, err := newSecure(opts)
	if err != nil {
		return nil, nil, err
	}
	cmd, _ = s.server(6379, true)
	files = map[string]string{}
	for _, f := range s.files(s.serverConf(true)) {
		b, _ := io.ReadAll(f.Reader)
		files[f.ContainerFilePath] = string(b)
	}
	return cmd, files, nil
}

// ClusterCreateCommand is the redis-cli command that creates a cluster started with opts.
func ClusterCreateCommand(opts Options) ([]string, error) {
	s, err := newSecure(opts)
	return s.redisCLI("--cluster", "create", "127.0.0.1:1"), err
}
