package conn

import "path/filepath"

// TLSFiles are the TLS settings as files and names, for a process that makes connections of its
// own from them (an external driver's adapter, in a language of its own): what a *tls.Config
// cannot be handed over as. Paths are absolute, so a process started in another directory finds
// them. It holds no secret: a key file's path, not its contents. It is a plain value.
type TLSFiles struct {
	// CAFile verifies the servers' certificates; "" means the system's roots.
	CAFile string
	// CertFile and KeyFile are the client certificate and key (mutual TLS); both or neither.
	CertFile, KeyFile string
	// ServerName is the name the servers' certificates must carry; "" means the dialled host.
	ServerName string
	// InsecureSkipVerify skips checking the servers' certificates.
	InsecureSkipVerify bool
}

// TLSFiles returns the TLS settings New was given, with absolute paths; the zero value when TLS
// is off.
func (s *Settings) TLSFiles() TLSFiles {
	if s == nil || s.tls == nil {
		return TLSFiles{}
	}
	return s.tlsFiles
}

// tlsFilesOf is opt's TLS settings with absolute paths (a path that cannot be made absolute is
// kept as given: New has read it already).
func tlsFilesOf(opt Options) TLSFiles {
	abs := func(p string) string {
		if p == "" {
			return ""
		}
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	return TLSFiles{CAFile: abs(opt.CAFile), CertFile: abs(opt.CertFile), KeyFile: abs(opt.KeyFile),
		ServerName: opt.ServerName, InsecureSkipVerify: opt.InsecureSkipVerify}
}
