package conn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
)

// Classify explains a failure to connect to addr with s: a refused password or user wraps
// ErrAuth, a refused command (NOPERM) ErrPermission, a database the server does not have
// ErrBadInput, an answer in another protocol ErrNotRedis, a TLS failure (an unknown CA, an expired or misnamed certificate, a
// TLS client on a plaintext port or the reverse) wraps ErrTLS, each with what to do about it.
// Anything else is returned as it is. The result never contains a password (see Redact).
func (s *Settings) Classify(addr string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	var (
		unknownCA   x509.UnknownAuthorityError
		invalid     x509.CertificateInvalidError
		hostname    x509.HostnameError
		header      tls.RecordHeaderError
		alert       tls.AlertError
		verifyError *tls.CertificateVerificationError
	)
	why := func(kind error, format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", kind, addr, s.Redact(fmt.Sprintf(format, a...)))
	}
	switch {
	case strings.Contains(msg, "WRONGPASS"):
		if s.User() != "" {
			return why(ErrAuth, "the server refused user %q with this password (WRONGPASS): the password is wrong, or the user does not exist or is disabled", s.User())
		}
		return why(ErrAuth, "the server refused the password (WRONGPASS): check it, or give the ACL user with --user")
	case strings.Contains(msg, "NOAUTH"):
		return why(ErrAuth, "the server requires a password: give --password-file (or %s), and --user for an ACL user", EnvPassword)
	case strings.Contains(msg, "NOPERM"):
		return why(ErrPermission, "%s", s.noPerm(msg))
	case strings.Contains(msg, "DB index is out of range") || strings.Contains(msg, "invalid DB index"):
		return why(ErrBadInput, "the server has no database %d (%s): its databases setting is lower; give a database it has (/0 to databases-1)", s.DB(), firstLine(msg))
	case strings.Contains(msg, "unknown message type"):
		// rueidis read a first byte that starts no RESP reply: 'H' of "HTTP/1.1", '<' of HTML.
		return why(ErrNotRedis, "the server there does not speak Redis's protocol (RESP): it is not a Redis server (an HTTP port?); check the address and port%s", firstByte(msg))
	case errors.As(err, &unknownCA):
		return why(ErrTLS, "the server's certificate is not signed by a CA lockbench trusts (--tls-ca-file, or the system's): %v", err)
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return why(ErrTLS, "the server's certificate has expired or is not yet valid: %v", err)
	case errors.As(err, &invalid):
		return why(ErrTLS, "the server's certificate is not valid: %v", err)
	case errors.As(err, &hostname):
		return why(ErrTLS, "the server's certificate is not for this host (give the name it carries with --tls-server-name): %v", err)
	case errors.As(err, &verifyError):
		return why(ErrTLS, "the server's certificate: %v", err)
	case errors.As(err, &header):
		return why(ErrTLS, "the server does not speak TLS there (a plaintext port?): use redis:// (without --tls), or its TLS port")
	case errors.As(err, &alert) || strings.Contains(msg, "remote error: tls:"):
		return why(ErrTLS, "the server ended the TLS handshake (%v): it may want a client certificate (--tls-cert-file, --tls-key-file) signed by a CA it trusts", err)
	case s.TLS() && closed(err):
		// TLS 1.3 ends the client's handshake before the server has checked its certificate:
		// a refusal arrives as a closed connection.
		return why(ErrTLS, "the server closed the TLS connection at once: it may want a client certificate (--tls-cert-file, --tls-key-file) signed by a CA it trusts (%v)", err)
	case !s.TLS() && closed(err):
		return why(ErrTLS, "the server closed the connection before answering: a TLS port does that to a plaintext client; if it is one, use rediss:// or --tls")
	case s.TLS() && isTimeout(err):
		return why(ErrTLS, "no answer to the TLS handshake: is that a plaintext port? then use redis:// without --tls (%v)", err)
	}
	if red := s.Redact(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

// noPerm explains a NOPERM refusal: the command it names, and why lockbench runs it.
func (s *Settings) noPerm(msg string) string {
	user := s.User()
	if user == "" {
		user = "default"
	}
	// Redis 7: "NOPERM this user has no permissions to run the 'info' command"; Redis 6:
	// "NOPERM this user has no permissions to run the 'info' command or its subcommand".
	_, rest, ok := strings.Cut(msg, "run the '")
	cmd, _, ok2 := strings.Cut(rest, "'")
	if !ok || !ok2 || cmd == "" {
		return fmt.Sprintf("user %q may not run a command lockbench needs or touch a key it uses: %s ('lockbench acl' prints the rules it needs)", user, firstLine(msg))
	}
	cmd = strings.ToUpper(cmd)
	why := "lockbench needs it"
	switch strings.Fields(cmd)[0] {
	case "INFO":
		why = "lockbench reads INFO to check what the address is and to record the deployment; give the user +info"
	case "SELECT":
		why = fmt.Sprintf("the address names database %d, which takes SELECT; give the user +select, or use database 0", s.DB())
	}
	return fmt.Sprintf("user %q may not run %s (NOPERM): %s ('lockbench acl' prints every rule it needs)", user, cmd, why)
}

// redactedError is an error whose text had a password in it, shown without; errors.Is and
// errors.As still see the original.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

func closed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.EPIPE)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// firstByte names the byte rueidis found where a RESP reply starts ("received unknown message
// type: 72"), as a character: 'H' says HTTP more plainly than 72.
func firstByte(msg string) string {
	_, n, _ := strings.Cut(msg, "unknown message type: ")
	b, err := strconv.Atoi(strings.TrimSpace(firstLine(n)))
	if err != nil || b < 0x20 || b > 0x7e {
		return ""
	}
	return fmt.Sprintf(" (its answer starts with %q)", rune(b))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
