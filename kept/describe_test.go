package kept

import (
	"testing"

	"github.com/lockbench/lockbench/compose"
)

func TestRunLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		st   State
		want string
	}{
		{"single", State{Topology: "single", Addrs: []string{"127.0.0.1:7000"}, Description: &compose.Description{Kind: compose.KindSingle}},
			"lockbench run --addr 127.0.0.1:7000"},
		{"cluster", State{Topology: "cluster", Addrs: []string{"127.0.0.1:7000", "127.0.0.1:7001"}, Description: &compose.Description{Kind: compose.KindCluster}},
			"lockbench run --topology cluster --addr 127.0.0.1:7000,127.0.0.1:7001"},
		{"sentinel, user and TLS", State{Topology: "sentinel", Addrs: []string{"127.0.0.1:26379"},
			Description: &compose.Description{Kind: compose.KindSentinel, MasterName: "orders"},
			Secure:      &Secure{TLS: true, CAFile: "/s/ca.crt", ServerName: "redis.example", User: "lockbench", PasswordFile: "/s/password"}},
			"lockbench run --topology sentinel --addr 127.0.0.1:26379 --master-name orders --tls --tls-ca-file /s/ca.crt --tls-server-name redis.example" +
				" --user lockbench --password-file /s/password --sentinel-user lockbench --sentinel-password-file /s/password"},
		{"masters, user only", State{Topology: "masters:2", Addrs: []string{"a:1", "b:2"}, Description: &compose.Description{Kind: compose.KindMasters},
			Secure: &Secure{User: "u", PasswordFile: "/p"}},
			"lockbench run --topology masters:2 --addr a:1,b:2 --user u --password-file /p"},
	} {
		if got := tc.st.RunLine(); got != tc.want {
			t.Errorf("%s: RunLine =\n  %s\nwant\n  %s", tc.name, got, tc.want)
		}
	}
}
