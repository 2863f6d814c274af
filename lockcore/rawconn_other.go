//go:build !linux

package lockcore

import (
	"context"
	"crypto/tls"
	"net"
)

// rawDial is nil where lockcore has no raw connection (rawconn_linux.go): rueidis dials as usual.
var rawDial func(ctx context.Context, addr string, d *net.Dialer, cfg *tls.Config) (net.Conn, error)
