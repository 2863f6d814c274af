// Package conn builds, in one place, how lockbench's clients connect to a Redis deployment from
// what users write: addresses (host:port, redis://, rediss://, unix://), credentials (a user, a
// password from a file or the environment, sentinel's own), and TLS (CA, client certificate,
// server name). Drivers, the topology checks and lockbench's own INFO connections all take one
// *Settings and ask it for their library's options; none of them reads a flag, a file or an
// environment variable. A password is kept inside Settings and leaves it only in client options
// and in Env for child processes: String, Addrs, Shown and every error are free of it.
package conn

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// Environment variables a password is read from, in this order after --password-file and a
// password in a URL. Env gives child processes the first.
const (
	// EnvPassword holds the data nodes' password.
	EnvPassword = "LOCKBENCH_REDIS_PASSWORD"
	// EnvRedisCLIAuth is redis-cli's variable, read too so that a shell set up for redis-cli
	// works as is.
	EnvRedisCLIAuth = "REDISCLI_AUTH"
	// EnvSentinelPassword holds the sentinels' own password.
	EnvSentinelPassword = "LOCKBENCH_SENTINEL_PASSWORD"
)

// Errors, checked with errors.Is. They are values, safe to share between goroutines.
var (
	// ErrBadInput is wrapped by New's errors: an address, flag or file lockbench cannot use.
	ErrBadInput = errors.New("conn: bad connection settings")
	// ErrAuth is wrapped by Classify's errors for a server that refused the credentials.
	ErrAuth = errors.New("conn: authentication failed")
	// ErrTLS is wrapped by Classify's errors for a TLS handshake that failed, or a TLS client
	// and a plaintext server (or the reverse) that could not talk.
	ErrTLS = errors.New("conn: TLS failed")
	// ErrPermission is wrapped by Classify's errors for a command lockbench needs that the
	// server refused to the user (NOPERM): the credentials are right, the ACL rules too narrow.
	ErrPermission = errors.New("conn: permission denied")
	// ErrNotRedis is wrapped by Classify's errors for an address that answers, but not as a
	// Redis server does: another protocol (HTTP), or answers that make no sense for Redis.
	ErrNotRedis = errors.New("conn: not a Redis server")
)

// Refused reports whether err says the deployment refused lockbench's connection settings or
// is not a Redis server lockbench can use (ErrAuth, ErrTLS, ErrPermission, ErrNotRedis,
// ErrBadInput): input to change, not a deployment that failed.
func Refused(err error) bool {
	for _, kind := range []error{ErrAuth, ErrTLS, ErrPermission, ErrNotRedis, ErrBadInput} {
		if errors.Is(err, kind) {
			return true
		}
	}
	return false
}

// Topology kinds New knows about; the compose.Kind* strings (conn depends on no package of
// lockbench's).
const (
	topoSentinel = "sentinel"
	topoCluster  = "cluster"
)

// Options are the connection settings as given on the command line. The zero value is
// plaintext, no user, no password. It is a plain value.
type Options struct {
	// Addrs are the addresses as users write them (see ParseAddr).
	Addrs []string
	// Topology is the deployment kind ("single", "sentinel", "cluster", "masters"): unix
	// sockets are refused for sentinel and cluster, whose nodes announce TCP addresses, and a
	// database other than 0 for cluster.
	Topology string
	// User is the ACL user on the data nodes (--user); a URL may name it instead.
	User string
	// PasswordFile holds the data nodes' password (--password-file); the first line is read.
	PasswordFile string
	// SentinelUser and SentinelPasswordFile are the sentinels' own credentials (sentinel only);
	// EnvSentinelPassword is read when no file is given.
	SentinelUser         string
	SentinelPasswordFile string
	// TLS turns TLS on (--tls); a rediss:// address or any TLS file turns it on too.
	TLS bool
	// CAFile verifies the servers' certificates (default: the system's roots).
	CAFile string
	// CertFile and KeyFile are the client certificate and key, for mutual TLS; both or neither.
	CertFile, KeyFile string
	// ServerName is the name the servers' certificates must carry (default: the dialled host).
	ServerName string
	// InsecureSkipVerify skips checking the servers' certificates; New warns.
	InsecureSkipVerify bool
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

// Settings are checked connection settings, ready to give to client libraries. A *Settings is
// immutable after New and safe for concurrent use; a nil *Settings means plaintext with no
// credentials, and every method accepts it.
type Settings struct {
	addrs    []string // what clients dial
	shown    []string // what lockbench prints: the addresses as given, password redacted
	child    []string // what a child process is given: the addresses as given, password removed
	unix     bool
	user     string
	password string
	db       int
	sUser    string
	sPass    string
	tls      *tls.Config
	tlsDesc  string
	tlsFiles TLSFiles // what tls was made from, for child processes
	warnings []string
}

// New checks opt, reads the password files and the TLS files, and returns the Settings. Errors
// wrap ErrBadInput, name the flag or address at fault, and never contain a password.
func New(opt Options) (*Settings, error) {
	getenv := opt.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	s := &Settings{user: opt.User, db: -1}
	// A user info without ':' (redis://word@host) is a password to redis-cli -u; lockbench
	// documents it as the ACL user with the password in a file. It is the user when a password
	// comes from elsewhere, else the password, as redis-cli reads it.
	passwordElsewhere := opt.PasswordFile != "" || getenv(EnvPassword) != "" || getenv(EnvRedisCLIAuth) != ""
	var urlPassword string
	var urlHasPassword, anyTLSURL, anyPlainURL bool
	for _, text := range opt.Addrs {
		a, err := ParseAddr(text)
		if err != nil {
			return nil, err
		}
		if slices.Contains(s.addrs, a.Dial) {
			return nil, fmt.Errorf("%w: address %s given twice", ErrBadInput, a.Dial)
		}
		s.addrs = append(s.addrs, a.Dial)
		if a.User != "" && !a.HasPassword && !passwordElsewhere {
			a.Password, a.HasPassword, a.User = a.User, true, ""
			s.shown = append(s.shown, RedactURL(text))
			s.child = append(s.child, stripUserInfo(text))
		} else {
			s.shown = append(s.shown, showUser(text))
			s.child = append(s.child, stripPassword(text))
		}
		if a.Unix {
			s.unix = true
		}
		switch {
		case a.TLS:
			anyTLSURL = true
		case a.URL && !a.Unix:
			anyPlainURL = true
		}
		if a.User != "" {
			if s.user != "" && s.user != a.User {
				return nil, fmt.Errorf("%w: address %s names a user, but %s: give one user", ErrBadInput, RedactURL(text), userSource(opt.User, s.user))
			}
			s.user = a.User
		}
		if a.HasPassword {
			if urlHasPassword && a.Password != urlPassword {
				return nil, fmt.Errorf("%w: the addresses carry different passwords: lockbench uses one for every node", ErrBadInput)
			}
			urlPassword, urlHasPassword = a.Password, true
		}
		if a.DB >= 0 {
			if s.db >= 0 && s.db != a.DB {
				return nil, fmt.Errorf("%w: the addresses name databases %d and %d: give one", ErrBadInput, s.db, a.DB)
			}
			s.db = a.DB
		}
	}
	if s.db < 0 {
		s.db = 0
	}
	if anyTLSURL && anyPlainURL {
		return nil, fmt.Errorf("%w: some addresses are rediss:// (TLS) and some redis://: every node is reached one way", ErrBadInput)
	}
	if s.unix {
		if len(s.addrs) > 1 && len(s.addrs) != countUnix(opt.Addrs) {
			return nil, fmt.Errorf("%w: unix:// and TCP addresses mixed", ErrBadInput)
		}
		switch opt.Topology {
		case topoSentinel, topoCluster:
			return nil, fmt.Errorf("%w: unix:// sockets are for single and masters:N: %s nodes tell clients TCP addresses", ErrBadInput, opt.Topology)
		}
	}
	if opt.Topology == topoCluster && s.db != 0 {
		return nil, fmt.Errorf("%w: database %d: a Redis Cluster has only database 0", ErrBadInput, s.db)
	}

	// The data nodes' password: a URL's or --password-file, not both; else the environment.
	switch {
	case urlHasPassword && opt.PasswordFile != "":
		return nil, fmt.Errorf("%w: a password is in --addr and in --password-file: give it once (the file: a URL's is visible in the process list)", ErrBadInput)
	case urlHasPassword:
		if urlPassword == "" {
			return nil, fmt.Errorf("%w: the password in --addr is empty", ErrBadInput)
		}
		s.password = urlPassword
		s.warnings = append(s.warnings, "the password in --addr is visible to every user of this machine in the process list (ps, /proc): prefer --password-file or "+EnvPassword)
	case opt.PasswordFile != "":
		p, err := readPassword("--password-file", opt.PasswordFile)
		if err != nil {
			return nil, err
		}
		s.password = p
	case getenv(EnvPassword) != "":
		s.password = getenv(EnvPassword)
	case getenv(EnvRedisCLIAuth) != "":
		s.password = getenv(EnvRedisCLIAuth)
	}
	if s.user != "" && s.password == "" {
		return nil, fmt.Errorf("%w: user %q has no password: give --password-file (or %s)", ErrBadInput, s.user, EnvPassword)
	}

	if opt.Topology == topoSentinel {
		s.sUser = opt.SentinelUser
		switch {
		case opt.SentinelPasswordFile != "":
			p, err := readPassword("--sentinel-password-file", opt.SentinelPasswordFile)
			if err != nil {
				return nil, err
			}
			s.sPass = p
		default:
			s.sPass = getenv(EnvSentinelPassword)
		}
		if s.sUser != "" && s.sPass == "" {
			return nil, fmt.Errorf("%w: sentinel user %q has no password: give --sentinel-password-file (or %s)", ErrBadInput, s.sUser, EnvSentinelPassword)
		}
	} else if opt.SentinelUser != "" || opt.SentinelPasswordFile != "" {
		return nil, fmt.Errorf("%w: --sentinel-user and --sentinel-password-file are for --topology sentinel", ErrBadInput)
	}

	useTLS := opt.TLS || anyTLSURL || opt.CAFile != "" || opt.CertFile != "" || opt.KeyFile != "" || opt.ServerName != "" || opt.InsecureSkipVerify
	if useTLS {
		if s.unix {
			return nil, fmt.Errorf("%w: TLS over a unix:// socket: Redis serves TLS on TCP ports only", ErrBadInput)
		}
		if anyPlainURL {
			return nil, fmt.Errorf("%w: TLS is on (--tls or a --tls-* flag) but the addresses say redis://: write rediss://", ErrBadInput)
		}
		cfg, desc, warn, err := tlsConfig(opt)
		if err != nil {
			return nil, err
		}
		s.tls, s.tlsDesc, s.tlsFiles = cfg, desc, tlsFilesOf(opt)
		s.warnings = append(s.warnings, warn...)
	}
	return s, nil
}

func userSource(flagUser, user string) string {
	if flagUser != "" {
		return fmt.Sprintf("--user is %q", flagUser)
	}
	return fmt.Sprintf("another address names %q", user)
}

func countUnix(addrs []string) int {
	n := 0
	for _, a := range addrs {
		if strings.HasPrefix(a, "unix://") {
			n++
		}
	}
	return n
}

// readPassword reads the first line of path: the password, without its line end. A file that
// cannot be read is not named: its "path" may be the password itself, typed where the path
// goes, and the message would show it in a CI log. The reason (no such file, permission
// denied) and the flag are enough to find the mistake.
func readPassword(flag, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		why := err
		var pe *fs.PathError
		if errors.As(err, &pe) {
			why = pe.Err
		}
		if errors.Is(err, fs.ErrNotExist) {
			why = errors.New("no such file")
		}
		return "", fmt.Errorf("%w: the file given to %s cannot be read: %v", ErrBadInput, flag, why)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return "", fmt.Errorf("%w: %s %s is empty: its first line must be the password", ErrBadInput, flag, path)
	}
	return line, nil
}

// Addrs returns the addresses clients dial (host:port, or a socket path), in a slice the caller
// owns.
func (s *Settings) Addrs() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.addrs)
}

// Shown returns the addresses as lockbench prints them: as given, any password replaced by ***.
func (s *Settings) Shown() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.shown)
}

// ChildAddrs returns the addresses as a child lockbench process takes them: as given, any
// password removed (Env carries it).
func (s *Settings) ChildAddrs() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.child)
}

// String is Shown joined by commas, e.g. "rediss://bench:***@10.0.0.5:6380".
func (s *Settings) String() string { return strings.Join(s.Shown(), ",") }

// Unix reports whether the addresses are Unix socket paths.
func (s *Settings) Unix() bool { return s != nil && s.unix }

// TLS reports whether clients connect with TLS.
func (s *Settings) TLS() bool { return s != nil && s.tls != nil }

// User returns the data nodes' ACL user, "" for the default user.
func (s *Settings) User() string {
	if s == nil {
		return ""
	}
	return s.user
}

// SentinelUser returns the sentinels' own ACL user, "" for none or the default user.
func (s *Settings) SentinelUser() string {
	if s == nil {
		return ""
	}
	return s.sUser
}

// HasPassword reports whether a password is sent to the data nodes.
func (s *Settings) HasPassword() bool { return s != nil && s.password != "" }

// DB returns the database number clients select (0 by default).
func (s *Settings) DB() int {
	if s == nil {
		return 0
	}
	return s.db
}

// Warnings returns what New found risky (a password in a URL, unchecked certificates), for
// the caller to print once.
func (s *Settings) Warnings() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.warnings)
}

// Describe returns the settings as result files record them: no secret, only whether there is
// one.
func (s *Settings) Describe() map[string]string {
	d := map[string]string{"tls": "off", "auth": "none"}
	if s == nil {
		return d
	}
	switch {
	case s.user != "":
		d["auth"] = "user " + s.user + ", password"
	case s.password != "":
		d["auth"] = "password (default user)"
	}
	if s.sUser != "" || s.sPass != "" {
		d["sentinel_auth"] = "password"
		if s.sUser != "" {
			d["sentinel_auth"] = "user " + s.sUser + ", password"
		}
	}
	if s.tls != nil {
		d["tls"] = s.tlsDesc
	}
	if s.db != 0 {
		d["db"] = fmt.Sprint(s.db)
	}
	if s.unix {
		d["transport"] = "unix socket"
	}
	return d
}

// Env returns the environment a child lockbench process needs to connect as this one does,
// NAME=value: the passwords, which must not go on a command line. Give it to exec.Cmd.Env
// after os.Environ() so that it wins.
func (s *Settings) Env() []string {
	if s == nil {
		return nil
	}
	var env []string
	if s.password != "" {
		env = append(env, EnvPassword+"="+s.password)
	}
	if s.sPass != "" {
		env = append(env, EnvSentinelPassword+"="+s.sPass)
	}
	return env
}

// Redact returns text with every occurrence of a password replaced by ***, and URL passwords
// too: for text that may have picked one up on its way (a library's error message).
func (s *Settings) Redact(text string) string {
	text = RedactURL(text)
	if s == nil {
		return text
	}
	for _, p := range []string{s.password, s.sPass} {
		if len(p) > 0 {
			text = strings.ReplaceAll(text, p, "***")
		}
	}
	return text
}
