package metrics

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// ErrBadAddr is wrapped by the errors of CheckAddr, GeneratorAddr and Listen for an address
// that cannot be served: malformed, with no host, or in use. Check it with errors.Is.
var ErrBadAddr = errors.New("bad metrics address")

// DefaultPort is the port the manual's examples use (docs/metrics.md): 9464, the one OpenTelemetry's Prometheus
// exporter registered, free on most machines.
const DefaultPort = 9464

// CheckAddr checks a HOST:PORT to serve on and returns a warning to show when it is reachable
// from other machines. A missing host (":9464") is refused: Go would listen on every interface,
// exposing the endpoint by accident; loopback (127.0.0.1, ::1, localhost) needs no warning, and
// any other host, 0.0.0.0 included, is served with one. Errors wrap ErrBadAddr. It is safe for
// concurrent use.
func CheckAddr(addr string) (warning string, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%w %q: want HOST:PORT, e.g. 127.0.0.1:%d", ErrBadAddr, addr, DefaultPort)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return "", fmt.Errorf("%w %q: port %q is not 0 to 65535", ErrBadAddr, addr, port)
	}
	if host == "" {
		return "", fmt.Errorf("%w %q: no host, so it would listen on every interface and expose the endpoint to the network; "+
			"give 127.0.0.1:%s for this machine only, or 0.0.0.0:%s to expose it on purpose", ErrBadAddr, addr, port, port)
	}
	if host == "localhost" {
		return "", nil
	}
	ip := net.ParseIP(host)
	switch {
	case ip != nil && ip.IsLoopback():
		return "", nil
	case ip != nil && ip.IsUnspecified():
		return fmt.Sprintf("metrics on %s: every interface, readable by anyone who can reach this machine", addr), nil
	}
	return fmt.Sprintf("metrics on %s: not loopback, readable by anyone who can reach that address", addr), nil
}

// GeneratorAddr is the address generator process index of a --procs run serves on: addr's
// port plus index, so that N processes take N consecutive ports and a scrape config can list
// them. Port 0 is refused: a port picked at random cannot be scraped. Errors wrap ErrBadAddr.
// It is safe for concurrent use.
func GeneratorAddr(addr string, index int) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%w %q: want HOST:PORT", ErrBadAddr, addr)
	}
	p, err := strconv.Atoi(port)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w %q: bad port", ErrBadAddr, addr)
	case p == 0:
		return "", fmt.Errorf("%w %q: port 0 picks a port at random; several generator processes need a known first port (each serves on the next)", ErrBadAddr, addr)
	case p+index > 65535:
		return "", fmt.Errorf("%w %q: generator %d would need port %d", ErrBadAddr, addr, index, p+index)
	}
	return net.JoinHostPort(host, strconv.Itoa(p+index)), nil
}

// listen binds addr, saying plainly when the port is taken.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("%w %s: the port is in use (another lockbench, or an exporter?)", ErrBadAddr, addr)
	case err != nil:
		return nil, fmt.Errorf("%w %s: %v", ErrBadAddr, addr, err)
	}
	return ln, nil
}

// CheckFree binds each address and lets it go at once: the check, before a run starts, that
// generator processes will be able to serve there. A port can still be taken in between, and
// the process that finds it taken then fails as Listen does. Errors wrap ErrBadAddr.
func CheckFree(addrs ...string) error {
	for _, a := range addrs {
		ln, err := listen(a)
		if err != nil {
			return err
		}
		ln.Close()
	}
	return nil
}
