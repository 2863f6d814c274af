package conn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
)

// Classify explains a failure to connect to addr with s: a refused password, user or
// permission wraps ErrAuth, a TLS failure (an unknown CA, an expired or misnamed certificate, a
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
		return why(ErrAuth, "user %q may not run a command lockbench needs: %s ('lockbench acl' prints the rules it needs)", s.User(), firstLine(msg))
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

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
