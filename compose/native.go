package compose

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lockbench/lockbench/pin"
	"github.com/redis/rueidis"
)

// Defaults for NativeOptions, applied to its zero fields.
const (
	// DefaultBinary is the redis-server program looked up in PATH.
	DefaultBinary = "redis-server"
	// DefaultHost is the address native servers bind to: loopback only, because they run with
	// protected mode off and no password.
	DefaultHost = "127.0.0.1"
	// DefaultStartTimeout bounds how long a start waits for PING to be answered.
	DefaultStartTimeout = 10 * time.Second
)

const (
	// stopGrace is how long Close lets redis-server shut down on SIGTERM before SIGKILL.
	stopGrace = 5 * time.Second
	// logTailLines is how much of the server log goes into a start error.
	logTailLines = 20
	// logKeepBytes caps the log kept in memory after Close; the tail is what explains a failure.
	logKeepBytes = 256 << 10
	// logFileName is the server log inside the process's temp dir.
	logFileName = "redis.log"
)

// NativeOptions configure native redis-server processes. The zero value means all defaults. A
// NativeOptions is a plain value: do not change one while a start that uses it is running.
type NativeOptions struct {
	// Binary is the redis-server program: a name looked up in PATH, or a path. Default
	// DefaultBinary.
	Binary string
	// Host is the IP address servers bind to and clients dial. Default DefaultHost; anything
	// but loopback exposes a server with no password.
	Host string
	// StartTimeout bounds the whole start, including retries after a port clash. Default
	// DefaultStartTimeout; it must not be negative.
	StartTimeout time.Duration
	// ExtraArgs are appended to the server's command line, after lockbench's own settings so
	// they override them, e.g. {"--maxmemory", "100mb"}.
	ExtraArgs []string
	// TLS, if set, makes every server serve TLS only, on the port it picks: data nodes,
	// sentinels, replication (tls-replication) and a cluster's bus (tls-cluster).
	TLS *NativeTLS
	// Auth, if set, makes every server require an ACL user (see NativeAuth).
	Auth *NativeAuth
	// CPUs, if set, are the only CPUs every server process (sentinels included) may run on,
	// from its start and after a restart: see package pin.
	CPUs pin.CPUs
}

// NativeAuth makes every server of a start require an ACL user: the default user is off, User
// may do everything, replicas log in to their master as User (masteruser, masterauth), and
// sentinels to the data nodes and to each other (sentinel auth-user and auth-pass,
// sentinel-user and sentinel-pass); admin connections log in as User too. The password goes
// into a config file (mode 0600, in the server's own dir), never on a command line, where every
// user of the machine could read it. It is a plain value.
type NativeAuth struct {
	User, Password string
}

// secureConfName is the config file of a server started with NativeAuth, inside its dir.
const secureConfName = "auth.conf"

// check refuses what a config file cannot carry as one word.
func (a *NativeAuth) check() error {
	for _, v := range []string{a.User, a.Password} {
		if v == "" || strings.ContainsAny(v, " \t\r\n\"'#") {
			return fmt.Errorf("compose: NativeAuth: user and password must be non-empty words without quotes or #")
		}
	}
	return nil
}

// conf is a data node's config file: the users, and how a replica logs in to its master.
func (a *NativeAuth) conf() string {
	return fmt.Sprintf("user default off\nuser %s on >%s ~* &* +@all\nmasteruser %s\nmasterauth %s\n", a.User, a.Password, a.User, a.Password)
}

// sentinelConf is what a sentinel's config adds: its users, and how it logs in to the data nodes
// of master name and to the other sentinels.
func (a *NativeAuth) sentinelConf(name string) string {
	return fmt.Sprintf("user default off\nuser %s on >%s ~* &* +@all\nsentinel auth-user %s %s\nsentinel auth-pass %s %s\nsentinel sentinel-user %s\nsentinel sentinel-pass %s\n",
		a.User, a.Password, name, a.User, name, a.Password, a.User, a.Password)
}

// applyAdmin returns what admin connections to servers started with opt add to their options:
// the user and TLS; nil when opt has neither.
func (o NativeOptions) applyAdmin() (func(*rueidis.ClientOption), error) {
	if o.Auth == nil && o.TLS == nil {
		return nil, nil
	}
	var cfg *tls.Config
	if o.TLS != nil {
		var err error
		if cfg, err = o.TLS.readyConfig(); err != nil {
			return nil, err
		}
	}
	return func(c *rueidis.ClientOption) {
		if o.Auth != nil {
			c.Username, c.Password = o.Auth.User, o.Auth.Password
		}
		if cfg != nil {
			c.TLSConfig = cfg.Clone()
		}
	}, nil
}

// NativeTLS makes a native server speak TLS only: redis-server's --tls-port on the picked port,
// --port 0. It is a plain value.
type NativeTLS struct {
	// CertFile and KeyFile are the server's certificate and key (PEM). The certificate must be
	// usable for client authentication too when AuthClients is "yes": the readiness check
	// presents it.
	CertFile, KeyFile string
	// CAFile is the CA that signs client certificates (redis-server's --tls-ca-cert-file).
	CAFile string
	// AuthClients is redis-server's tls-auth-clients: "yes", "no" or "optional" (the default).
	AuthClients string
}

// args returns the server's TLS arguments for port.
func (t *NativeTLS) args(port int) []string {
	auth := t.AuthClients
	if auth == "" {
		auth = "optional"
	}
	return []string{"--port", "0", "--tls-port", strconv.Itoa(port),
		"--tls-cert-file", t.CertFile, "--tls-key-file", t.KeyFile, "--tls-ca-cert-file", t.CAFile,
		"--tls-auth-clients", auth, "--tls-replication", "yes"}
}

// readyConfig is the client TLS config of the readiness check: the server is ours, so its
// certificate is not verified (a test may give it an expired one on purpose); when it demands
// client certificates, its own serves as the client's.
func (t *NativeTLS) readyConfig() (*tls.Config, error) {
	cfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // our own server
	if t.AuthClients == "yes" {
		pair, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("compose: TLS certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// withDefaults returns o with its zero fields filled in.
func (o NativeOptions) withDefaults() (NativeOptions, error) {
	if o.Binary == "" {
		o.Binary = DefaultBinary
	}
	if o.Host == "" {
		o.Host = DefaultHost
	}
	if o.Auth != nil {
		if err := o.Auth.check(); err != nil {
			return o, err
		}
	}
	switch {
	case o.StartTimeout == 0:
		o.StartTimeout = DefaultStartTimeout
	case o.StartTimeout < 0:
		return o, fmt.Errorf("compose: NativeOptions.StartTimeout %v is negative", o.StartTimeout)
	}
	return o, nil
}

// findBinary resolves name to an absolute path. The path must be absolute because the process
// starts in its own temp dir, where a relative path would mean something else.
func findBinary(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		explicit := strings.ContainsRune(name, filepath.Separator) || strings.ContainsRune(name, '/')
		if !explicit && name == DefaultBinary && errors.Is(err, exec.ErrNotFound) {
			return "", ErrRedisServerNotFound
		}
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return "", &binaryError{name: name, explicit: explicit, err: err}
		}
		// It exists but cannot be run (not executable, a directory): that is not "install
		// redis-server", so it does not wrap ErrRedisServerNotFound.
		return "", fmt.Errorf("compose: redis-server binary %q cannot be used: %w", name, err)
	}
	return filepath.Abs(path)
}

// freePort asks the kernel for a free TCP port on host. The port is free only until someone
// else takes it, so starts retry when the server reports it in use.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, fmt.Errorf("compose: find a free port on %s: %w", host, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// nativeProcess is one redis-server child with its own temp dir, which holds its log and is its
// working directory (so any file it writes lands there and is removed with it). Its methods are
// safe for concurrent use.
type nativeProcess struct {
	cmd     *exec.Cmd
	dir     string
	logPath string
	tls     *tls.Config // the readiness check's, for a TLS-only server; nil: plaintext
	cpus    pin.CPUs    // where it runs, kept for a restart; empty: anywhere

	// done is closed by the reaper goroutine once cmd.Wait has returned; waitErr is set before.
	done    chan struct{}
	waitErr error

	stopOnce sync.Once
	stopErr  error

	mu       sync.Mutex
	stopped  bool   // dir is gone; finalLog holds what the log said
	finalLog string // log snapshot taken before the dir was removed
}

// startProcessWithFiles starts bin with args in a new temp dir, stdout and stderr going to the
// log file there (config errors are printed to stderr before redis-server opens any log file,
// so both streams must land in it), on cpus (anywhere when empty). files maps a name in the dir
// to its content, written before the start: a sentinel refuses to run without a config file it
// can rewrite, and an ACL password goes in a file rather than on the command line.
func startProcessWithFiles(bin string, args []string, files map[string]string, cpus pin.CPUs) (*nativeProcess, error) {
	dir, err := os.MkdirTemp("", "lockbench-redis-")
	if err != nil {
		return nil, fmt.Errorf("compose: make temp dir for redis-server: %w", err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("compose: write %s for redis-server: %w", name, err)
		}
	}
	p, err := startProcessIn(dir, bin, args, cpus)
	if err != nil {
		os.RemoveAll(dir)
	}
	return p, err
}

// startProcessIn starts bin with args in dir, which exists and which the process's stop
// removes; the log is appended to, so a restarted server's log follows its earlier life. The
// process runs on cpus (all CPUs when empty).
func startProcessIn(dir, bin string, args []string, cpus pin.CPUs) (*nativeProcess, error) {
	logPath := filepath.Join(dir, logFileName)
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("compose: create redis-server log: %w", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout = logFile // an *os.File is handed to the child as is: no copying goroutine
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	err = pin.Start(cpus, cmd.Start)
	logFile.Close() // the child has its own descriptor now
	if err != nil {
		return nil, fmt.Errorf("compose: start %s: %w", bin, err)
	}
	p := &nativeProcess{cmd: cmd, dir: dir, logPath: logPath, cpus: cpus, done: make(chan struct{})}
	// The one reaper: it alone calls Wait, so the child never lingers as a zombie and
	// everyone else learns of the exit from done.
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// pid returns the child's process id.
func (p *nativeProcess) pid() int { return p.cmd.Process.Pid }

// exited reports whether the child has exited and been reaped.
func (p *nativeProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the child (SIGTERM, then SIGKILL after grace), waits until it is reaped, keeps its
// log in memory and removes its temp dir. Later and concurrent calls wait for the first and
// return its result.
func (p *nativeProcess) stop(grace time.Duration) error {
	p.stopOnce.Do(func() {
		if !p.exited() {
			// Where SIGTERM cannot be sent (Windows), kill at once.
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
				_ = p.cmd.Process.Kill()
			}
			t := time.NewTimer(grace)
			select {
			case <-p.done:
			case <-t.C:
				_ = p.cmd.Process.Kill()
				<-p.done
			}
			t.Stop()
		}
		final := readLogTail(p.logPath, logKeepBytes)
		p.mu.Lock()
		p.finalLog, p.stopped = final, true
		p.mu.Unlock()
		if err := os.RemoveAll(p.dir); err != nil {
			p.stopErr = fmt.Errorf("compose: remove redis-server dir: %w", err)
		}
	})
	return p.stopErr
}

// log returns the server log so far, or as it was when the process was stopped.
func (p *nativeProcess) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return p.finalLog
	}
	return readLogTail(p.logPath, logKeepBytes)
}

// exitError describes how the child ended, for a start that it did not survive.
func (p *nativeProcess) exitError() error {
	<-p.done
	if p.waitErr != nil {
		return fmt.Errorf("%w (%v)", ErrServerExited, p.waitErr)
	}
	return fmt.Errorf("%w (exit status 0)", ErrServerExited)
}

// readLogTail returns at most the last max bytes of the file at path, cut to whole lines, or ""
// if it cannot be read: a missing log must not hide the error being reported.
func readLogTail(path string, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	if fi.Size() <= max {
		b, err := io.ReadAll(f)
		if err != nil {
			return ""
		}
		return string(b)
	}
	// Read one byte more than kept, so a line that starts exactly at the cut is kept whole.
	b, err := io.ReadAll(io.NewSectionReader(f, fi.Size()-max-1, max+1))
	if err != nil {
		return ""
	}
	if i := strings.IndexByte(string(b), '\n'); i >= 0 {
		return string(b[i+1:])
	}
	return ""
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		i = strings.LastIndexByte(s[:i], '\n')
		if i < 0 {
			return s
		}
	}
	if i == len(s) {
		return ""
	}
	return s[i+1:]
}

// waitReady polls addr until the server started as p answers PING, p exits, or ctx ends. A
// server that answers but is not p (another one won the port race) does not count: p will fail
// to bind and exit, and the caller retries on a new port.
func waitReady(ctx context.Context, p *nativeProcess, addr string) error {
	// The exit of p cancels the wait at once, even in the middle of a PING to a port that a
	// foreign listener holds and never answers.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-p.done:
			cancel(p.exitError())
		case <-ctx.Done():
		}
	}()
	delay := 5 * time.Millisecond
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if p.exited() {
				return p.exitError()
			}
			return fmt.Errorf("no answer to PING: %w", context.Cause(ctx))
		case <-t.C:
		}
		up, pid := ping(ctx, addr, p.tls)
		if up && (pid == 0 || pid == p.pid()) && !p.exited() {
			return nil
		}
		t.Reset(delay)
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// ping sends an inline PING to addr on a fresh connection and reports whether the server is up,
// plus its process id from INFO server (0 when it cannot tell, e.g. INFO renamed away). A
// server that wants a password (-NOAUTH) is up too: ExtraArgs may set requirepass.
func ping(ctx context.Context, addr string, tlsConfig *tls.Config) (up bool, pid int) {
	d := net.Dialer{Timeout: time.Second}
	var conn net.Conn
	var err error
	if tlsConfig != nil {
		conn, err = (&tls.Dialer{NetDialer: &d, Config: tlsConfig}).DialContext(ctx, "tcp", addr)
	} else {
		conn, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return false, 0
	}
	defer conn.Close()
	// Closing the connection is what interrupts a read blocked on a silent peer.
	defer context.AfterFunc(ctx, func() { conn.Close() })()
	deadline := time.Now().Add(time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	conn.SetDeadline(deadline)
	r := bufio.NewReader(conn)

	if _, err := io.WriteString(conn, "PING\r\n"); err != nil {
		return false, 0
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return false, 0
	}
	switch {
	case strings.HasPrefix(line, "+PONG"):
	case strings.HasPrefix(line, "-NOAUTH"):
		return true, 0
	default: // e.g. -LOADING: up but not ready
		return false, 0
	}

	if _, err := io.WriteString(conn, "INFO server\r\n"); err != nil {
		return true, 0
	}
	return true, infoPid(r)
}

// infoPid reads one bulk-string reply to INFO and returns its process_id, or 0.
func infoPid(r *bufio.Reader) int {
	head, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(head, "$") {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(head[1:]))
	if err != nil || n < 0 || n > 1<<20 {
		return 0
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0
	}
	for _, l := range strings.Split(string(body), "\r\n") {
		if v, ok := strings.CutPrefix(l, "process_id:"); ok {
			pid, _ := strconv.Atoi(v)
			return pid
		}
	}
	return 0
}
