package conn

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"time"
)

// tlsConfig builds the client TLS config of opt, a description for results, and warnings.
// Errors wrap ErrBadInput and name the file at fault.
func tlsConfig(opt Options) (*tls.Config, string, []string, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: opt.ServerName}
	desc := []string{"on"}
	var warn []string
	if opt.InsecureSkipVerify && opt.CAFile != "" {
		// TLS libraries let skip-verify win and ignore the CA: say so rather than guess which
		// one the user meant.
		return nil, "", nil, fmt.Errorf("%w: --tls-insecure-skip-verify and --tls-ca-file contradict each other: skip-verify would win and the CA would never be checked; give --tls-ca-file alone to verify against it", ErrBadInput)
	}
	if opt.CAFile != "" {
		pem, err := os.ReadFile(opt.CAFile)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%w: --tls-ca-file: %v", ErrBadInput, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, "", nil, fmt.Errorf("%w: --tls-ca-file %s: no PEM certificate in it", ErrBadInput, opt.CAFile)
		}
		cfg.RootCAs = pool
		desc = append(desc, "CA "+opt.CAFile)
	} else {
		desc = append(desc, "system CAs")
	}
	switch {
	case opt.CertFile != "" && opt.KeyFile == "":
		return nil, "", nil, fmt.Errorf("%w: --tls-cert-file needs --tls-key-file, its private key", ErrBadInput)
	case opt.CertFile == "" && opt.KeyFile != "":
		return nil, "", nil, fmt.Errorf("%w: --tls-key-file needs --tls-cert-file, its certificate", ErrBadInput)
	case opt.CertFile != "":
		for flag, path := range map[string]string{"--tls-cert-file": opt.CertFile, "--tls-key-file": opt.KeyFile} {
			if _, err := os.ReadFile(path); err != nil {
				return nil, "", nil, fmt.Errorf("%w: %s: %v", ErrBadInput, flag, err)
			}
		}
		pair, err := tls.LoadX509KeyPair(opt.CertFile, opt.KeyFile)
		if err != nil {
			return nil, "", nil, fmt.Errorf("%w: --tls-cert-file %s and --tls-key-file %s: %v", ErrBadInput, opt.CertFile, opt.KeyFile, err)
		}
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			return nil, "", nil, fmt.Errorf("%w: --tls-cert-file %s: %v", ErrBadInput, opt.CertFile, err)
		}
		if now := time.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
			return nil, "", nil, fmt.Errorf("%w: --tls-cert-file %s is valid from %s to %s, not now: servers will refuse it", ErrBadInput,
				opt.CertFile, leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))
		}
		cfg.Certificates = []tls.Certificate{pair}
		desc = append(desc, "client certificate "+opt.CertFile)
	}
	if opt.ServerName != "" {
		desc = append(desc, "server name "+opt.ServerName)
	}
	if opt.InsecureSkipVerify {
		cfg.InsecureSkipVerify = true
		desc = append(desc, "server certificate NOT verified")
		warn = append(warn, "--tls-insecure-skip-verify: the servers' certificates are not checked, so anyone on the path can pose as Redis and read the password; use --tls-ca-file")
	}
	return cfg, strings.Join(desc, ", "), warn, nil
}
