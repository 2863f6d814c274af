package conn

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// DefaultPort is the port of a redis:// or rediss:// URL that names none.
const DefaultPort = 6379

// Addr is one address as a user wrote it, read: where to dial and what the URL said besides. It
// is a plain value, safe to copy and share.
type Addr struct {
	// Dial is what clients dial: host:port, or the socket's path for a unix:// address.
	Dial string
	// Unix says Dial is a Unix socket path.
	Unix bool
	// TLS says the address was written rediss://.
	TLS bool
	// URL says the address was written as a URL, not bare host:port.
	URL bool
	// User and Password are the URL's, if it had them; HasPassword tells an empty one apart.
	User        string
	Password    string
	HasPassword bool
	// DB is the URL's database number (/db, or ?db= for unix://); -1 when it names none.
	DB int
}

// ParseAddr reads one address as users write it: host:port, redis://[user[:password]@]host[:port][/db],
// rediss://… (TLS) or unix:///path/to/socket[?db=N]. Errors wrap ErrBadInput and never include
// the password.
func ParseAddr(s string) (Addr, error) {
	a := Addr{DB: -1}
	if !strings.Contains(s, "://") {
		host, port, err := net.SplitHostPort(s)
		if err != nil || host == "" {
			return a, fmt.Errorf("%w: address %q: want host:port, redis://host:port, rediss://host:port or unix:///path", ErrBadInput, s)
		}
		if err := checkPort(port); err != nil {
			return a, fmt.Errorf("%w: address %q: %v", ErrBadInput, s, err)
		}
		a.Dial = s
		return a, nil
	}
	shown := RedactURL(s)
	u, err := url.Parse(s)
	if err != nil {
		return a, fmt.Errorf("%w: address %s: not a valid URL: want redis[s]://[user[:password]@]host[:port][/db], the port a number from 1 to 65535 (escape '@', ':' and '/' in a password as %%40, %%3A, %%2F)", ErrBadInput, shown)
	}
	a.URL = true
	if u.User != nil {
		a.User = u.User.Username()
		a.Password, a.HasPassword = u.User.Password()
	}
	if u.RawQuery != "" && u.Scheme != "unix" || u.Fragment != "" {
		return a, fmt.Errorf("%w: address %s: lockbench takes no URL options (?…); use its flags", ErrBadInput, shown)
	}
	switch u.Scheme {
	case "redis", "rediss":
		a.TLS = u.Scheme == "rediss"
		host, port := u.Hostname(), u.Port()
		if host == "" {
			return a, fmt.Errorf("%w: address %s: no host", ErrBadInput, shown)
		}
		if port == "" {
			if strings.HasSuffix(u.Host, ":") {
				return a, fmt.Errorf("%w: address %s: empty port", ErrBadInput, shown)
			}
			port = strconv.Itoa(DefaultPort)
		} else if err := checkPort(port); err != nil {
			return a, fmt.Errorf("%w: address %s: %v", ErrBadInput, shown, err)
		}
		a.Dial = net.JoinHostPort(host, port)
		if p := strings.Trim(u.Path, "/"); p != "" {
			db, err := strconv.Atoi(p)
			if err != nil || db < 0 {
				return a, fmt.Errorf("%w: address %s: the path must be a database number (/0, /1, …)", ErrBadInput, shown)
			}
			a.DB = db
		}
	case "unix":
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return a, fmt.Errorf("%w: address %s: want unix:///absolute/path/to/redis.sock", ErrBadInput, shown)
		}
		a.Unix, a.Dial = true, u.Path
		q := u.Query()
		for k := range q {
			if k != "db" {
				return a, fmt.Errorf("%w: address %s: unix:// takes only ?db=N", ErrBadInput, shown)
			}
		}
		if v := q.Get("db"); v != "" {
			db, err := strconv.Atoi(v)
			if err != nil || db < 0 {
				return a, fmt.Errorf("%w: address %s: db must be a database number", ErrBadInput, shown)
			}
			a.DB = db
		}
	default:
		return a, fmt.Errorf("%w: address %s: scheme %q: want redis://, rediss:// or unix:// (or host:port)", ErrBadInput, shown, u.Scheme)
	}
	return a, nil
}

func checkPort(port string) error {
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("port %q must be a number from 1 to 65535", port)
	}
	return nil
}

// RedactURL returns s with the password of a URL's user info replaced by ***, e.g.
// redis://bench:***@host:6379; a user info without ':' is replaced whole (redis://***@host), as
// redis-cli -u reads it as a password. Anything that is not a URL with user info is returned
// as is.
// It never fails: text it cannot parse is searched for "scheme://user:password@" by hand.
func RedactURL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	// The user info ends at the last '@' before the path: a password may contain '@' (unescaped,
	// as people type it), a host cannot.
	end := len(rest)
	if j := strings.IndexAny(rest, "/?#"); j >= 0 && !strings.Contains(rest[j:], "@") {
		end = j
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return s
	}
	user, _, hasPass := strings.Cut(rest[:at], ":")
	if !hasPass {
		// redis-cli -u reads a user info without ':' as a password.
		return s[:i+3] + "***" + rest[at:]
	}
	return s[:i+3] + user + ":***" + rest[at:]
}

// showUser is RedactURL for an address whose user info without ':' is known to be a user
// name (a password came from elsewhere): the name is shown.
func showUser(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		if at := strings.LastIndex(s[i+3:], "@"); at >= 0 && !strings.Contains(s[i+3:i+3+at], ":") {
			return s
		}
	}
	return RedactURL(s)
}

// stripPassword returns s with a URL's password removed, its user kept.
func stripPassword(s string) string {
	r := showUser(s)
	if r == s {
		return s
	}
	return strings.Replace(r, ":***@", "@", 1)
}

// stripUserInfo returns the URL s without its user info: for an address whose user info is a
// password alone.
func stripUserInfo(s string) string {
	r := RedactURL(s)
	return strings.Replace(r, "://***@", "://", 1)
}

// RedactArgs returns a copy of args, each argument's URLs (comma separated, or after '=') with
// their passwords replaced by ***: the command line as results record it.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		parts := strings.Split(a, ",")
		for j, p := range parts {
			if k := strings.Index(p, "="); k >= 0 && strings.HasPrefix(p, "-") {
				parts[j] = p[:k+1] + RedactURL(p[k+1:])
			} else {
				parts[j] = RedactURL(p)
			}
		}
		out[i] = strings.Join(parts, ",")
	}
	return out
}
