package conn

import "os"

// NewSide returns the settings of a side server: a Redis that lockbench uses beside the
// deployment under test (a result store, a safety referee), at one address with its own CA file.
// Its password comes from the URL or from the environment variable env only, never from
// EnvPassword: the data nodes' password is for the data nodes. getenv reads the environment; nil
// means the process's. Errors are New's (they wrap ErrBadInput) and never contain a password.
func NewSide(addr, caFile, env string, getenv func(string) string) (*Settings, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	return New(Options{
		Addrs: []string{addr}, Topology: "single", CAFile: caFile,
		Getenv: func(k string) string {
			if k == EnvPassword {
				return getenv(env)
			}
			return ""
		},
	})
}
