package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server serves /metrics on one address. Create it with Listen; Close it when the process is
// done. Its methods are safe for concurrent use.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	runs *collector
	done chan struct{}
}

// Listen binds addr (see CheckAddr; port 0 picks a free one, see Addr) and serves the metrics
// of the runs registered with Server.Run, plus the Go runtime's and the process's. Errors wrap
// ErrBadAddr.
func Listen(addr string) (*Server, error) {
	if _, err := CheckAddr(addr); err != nil {
		return nil, err
	}
	ln, err := listen(addr)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	s := &Server{ln: ln, runs: &collector{}, done: make(chan struct{})}
	reg.MustRegister(s.runs, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "lockbench: metrics at /metrics")
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // ErrServerClosed once Close runs
	}()
	return s, nil
}

// Addr is the address the server listens on, with the port Listen picked for port 0.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the address of the metrics page, for messages.
func (s *Server) URL() string { return "http://" + s.Addr() + "/metrics" }

// Close stops serving: a scrape under way gets up to a second to finish, then connections are
// closed. It waits for the serving goroutine, so nothing is left running. Close of a nil
// Server does nothing.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	<-s.done
	return err
}

// Run registers a run's series, all zero, and returns the handle that updates them. Runs stay
// exported until the server closes. Run of a nil Server returns nil, whose Update does nothing.
func (s *Server) Run(l Labels) *Run {
	if s == nil {
		return nil
	}
	r := newRun(l)
	s.runs.add(r)
	return r
}
