package docker

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/testcontainers/testcontainers-go"
)

// Auth makes every node of a topology require an ACL user: the default user is off, User may
// do everything, replicas log in to their master as User (masteruser, masterauth), sentinels
// to the data nodes and to each other as User, and Start's own probes too. The password goes
// into the containers in files copied in before they start, never on a command line or in the
// environment, so docker inspect and ps do not show it. It is a plain value.
type Auth struct {
	User, Password string
}

// TLS makes every node serve TLS only (port 0, tls-port), replication (tls-replication) and a
// cluster's bus (tls-cluster) included. The files are read by Start and copied into every
// container. It is a plain value.
type TLS struct {
	// CertFile and KeyFile are the nodes' certificate and key (PEM), used as the client
	// certificate towards other nodes too. Clients dial single, masters:N and cluster nodes
	// at 127.0.0.1 and sentinel's at container addresses known only once they run: the
	// certificate must be for 127.0.0.1 and for a name the clients then check instead (their
	// TLS server name).
	CertFile, KeyFile string
	// CAFile is the CA that signed the nodes' certificates, which they trust in each other.
	CAFile string
}

// secretsDir is where a secure node's files go inside its container.
const secretsDir = "/lockbench"

// In-container paths of a secure node's files.
const (
	confPath     = secretsDir + "/redis.conf"
	passwordPath = secretsDir + "/password"
	certPath     = secretsDir + "/server.crt"
	keyPath      = secretsDir + "/server.key"
	caPath       = secretsDir + "/ca.crt"
)

// secure is what Start made of Options.Auth and Options.TLS: the files every node gets, and
// how the probes reach the nodes. Its zero value is a plaintext topology without users.
type secure struct {
	auth              *Auth
	tls               bool
	cert, key, caCert []byte
}

// newSecure checks opts' Auth and reads its TLS files.
func newSecure(opts Options) (secure, error) {
	s := secure{auth: opts.Auth}
	if a := opts.Auth; a != nil {
		for _, v := range []string{a.User, a.Password} {
			// One word each in a config file, and never quoted.
			if v == "" || strings.ContainsAny(v, " \t\r\n\"'#\\") {
				return s, fmt.Errorf("docker: Auth: user and password must be non-empty words without quotes, backslashes or #")
			}
		}
	}
	if t := opts.TLS; t != nil {
		s.tls = true
		for _, f := range []struct {
			name string
			path string
			to   *[]byte
		}{{"CertFile", t.CertFile, &s.cert}, {"KeyFile", t.KeyFile, &s.key}, {"CAFile", t.CAFile, &s.caCert}} {
			b, err := os.ReadFile(f.path)
			if err != nil {
				return s, fmt.Errorf("docker: TLS.%s: %w", f.name, err)
			}
			*f.to = b
		}
		if _, err := tls.X509KeyPair(s.cert, s.key); err != nil {
			return s, fmt.Errorf("docker: TLS.CertFile and KeyFile: %w", err)
		}
	}
	return s, nil
}

// on reports whether nodes need a config file of their own.
func (s secure) on() bool { return s.auth != nil || s.tls }

// probe is how Start's probes reach the nodes. The nodes are the containers Start just made,
// so their certificate is not checked here; clients check it against the CA.
func (s secure) probe() probe {
	var p probe
	if s.tls {
		p.tls = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // our own containers
	}
	if s.auth != nil {
		p.user, p.password = s.auth.User, s.auth.Password
	}
	return p
}

// listen returns the arguments that make a node listen on port: plaintext, or TLS only.
func (s secure) listen(port int) []string {
	if s.tls {
		return []string{"--port", "0", "--tls-port", strconv.Itoa(port)}
	}
	return []string{"--port", strconv.Itoa(port)}
}

// tlsConf is the TLS part of every secure node's config file; cluster adds the bus.
func (s secure) tlsConf(cluster bool) string {
	if !s.tls {
		return ""
	}
	conf := fmt.Sprintf("tls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\ntls-auth-clients optional\ntls-replication yes\n", certPath, keyPath, caPath)
	if cluster {
		conf += "tls-cluster yes\n"
	}
	return conf
}

// usersConf makes the default user off and User all-powerful.
func (s secure) usersConf() string {
	if s.auth == nil {
		return ""
	}
	return fmt.Sprintf("user default off\nuser %s on >%s ~* &* +@all\n", s.auth.User, s.auth.Password)
}

// serverConf is a data node's config file: TLS, users, and how a replica logs in to its master.
func (s secure) serverConf(cluster bool) string {
	conf := s.tlsConf(cluster) + s.usersConf()
	if s.auth != nil {
		conf += fmt.Sprintf("masteruser %s\nmasterauth %s\n", s.auth.User, s.auth.Password)
	}
	return conf
}

// sentinelConf is what a sentinel's config file adds: TLS, users, and how it logs in to the
// other sentinels (the data nodes' credentials are set with SENTINEL SET once it monitors
// them, see monitorAuth).
func (s secure) sentinelConf() string {
	conf := s.tlsConf(false) + s.usersConf()
	if s.auth != nil {
		conf += fmt.Sprintf("sentinel sentinel-user %s\nsentinel sentinel-pass %s\n", s.auth.User, s.auth.Password)
	}
	return conf
}

// monitorAuth is the SENTINEL SET that gives a sentinel the data nodes' credentials of master
// name; nil without Auth. Sentinel redacts the password in what it logs and publishes of it.
func (s secure) monitorAuth(name string) []string {
	if s.auth == nil {
		return nil
	}
	return []string{"SENTINEL", "SET", name, "auth-user", s.auth.User, "auth-pass", s.auth.Password}
}

// files returns the files a secure node needs, conf at confPath among them (mode 0600: the
// password and the key are in them). Each call returns fresh readers.
func (s secure) files(conf string) []testcontainers.ContainerFile {
	file := func(path string, data []byte) testcontainers.ContainerFile {
		return testcontainers.ContainerFile{Reader: bytes.NewReader(data), ContainerFilePath: path, FileMode: 0o600}
	}
	fs := []testcontainers.ContainerFile{file(confPath, []byte(conf))}
	if s.auth != nil {
		fs = append(fs, file(passwordPath, []byte(s.auth.Password+"\n")))
	}
	if s.tls {
		fs = append(fs, file(certPath, s.cert), file(keyPath, s.key), file(caPath, s.caCert))
	}
	return fs
}

// server returns the command and options of a data node listening on port, with extra
// arguments (after lockbench's usual settings): redis-server reads a secure node's config file
// first, as its first argument.
func (s secure) server(port int, cluster bool, extra ...string) ([]string, []testcontainers.ContainerCustomizer) {
	cmd := []string{"redis-server"}
	var opts []testcontainers.ContainerCustomizer
	if s.on() {
		cmd = append(cmd, confPath)
		opts = append(opts, testcontainers.WithFiles(s.files(s.serverConf(cluster))...))
	}
	cmd = append(cmd, s.listen(port)...)
	cmd = append(cmd, serverArgs...)
	return append(cmd, extra...), opts
}

// redisCLI returns the command that runs redis-cli with args inside a node's container, as the
// user and over TLS when the topology has them: the password is read from its file there by
// the shell, so that it is not in the exec's command line or environment.
func (s secure) redisCLI(args ...string) []string {
	var flags []string
	if s.tls {
		flags = append(flags, "--tls", "--cacert", caPath, "--cert", certPath, "--key", keyPath)
	}
	if s.auth == nil {
		return append(append([]string{"redis-cli"}, flags...), args...)
	}
	flags = append(flags, "--user", s.auth.User)
	script := `read -r REDISCLI_AUTH < ` + passwordPath + ` && export REDISCLI_AUTH && exec redis-cli "$@"`
	return append(append([]string{"sh", "-c", script, "redis-cli"}, flags...), args...)
}
