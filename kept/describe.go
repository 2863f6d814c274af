package kept

import (
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/compose"
)

// Summary says what an up runs, e.g. `cluster (native), 6 nodes, up pid 4242`.
func (st State) Summary() string {
	s := fmt.Sprintf("%s (%s)", st.Topology, st.Provider)
	if st.Description != nil {
		s += fmt.Sprintf(", %d node", len(st.Description.Nodes))
		if len(st.Description.Nodes) != 1 {
			s += "s"
		}
	} else {
		s += ", still starting"
	}
	return s + fmt.Sprintf(", up pid %d", st.Pid)
}

// RunLine is the lockbench run command line that benchmarks the topology of st: its addresses,
// master name, TLS CA and user with the password's file (never the password). st must be ready
// (Description set).
func (st State) RunLine() string {
	line := "lockbench run"
	if st.Description.Kind != compose.KindSingle {
		line += " --topology " + st.Topology
	}
	line += " --addr " + strings.Join(st.Addrs, ",")
	if st.Description.MasterName != "" {
		line += " --master-name " + st.Description.MasterName
	}
	if sec := st.Secure; sec != nil {
		if sec.TLS {
			line += " --tls --tls-ca-file " + sec.CAFile
			if sec.ServerName != "" {
				line += " --tls-server-name " + sec.ServerName
			}
		}
		if sec.User != "" {
			line += " --user " + sec.User + " --password-file " + sec.PasswordFile
			if st.Description.Kind == compose.KindSentinel {
				line += " --sentinel-user " + sec.User + " --sentinel-password-file " + sec.PasswordFile
			}
		}
	}
	return line
}
