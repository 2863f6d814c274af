package faults

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/lockbench/lockbench/conn"
	"github.com/redis/rueidis"
)

// commandTimeout bounds a fail-over command, its dial included.
const commandTimeout = 3 * time.Second

// command sends one command to the node at addr on a connection of its own, logged in and over
// TLS as s says (a sentinel's own credentials when sentinel is set), and fails on an error
// reply. Its errors never contain a password.
func command(ctx context.Context, s *conn.Settings, sentinel bool, addr string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	o := rueidis.ClientOption{
		InitAddress:       []string{addr},
		ForceSingleClient: true, // this node, whatever it is
		DisableCache:      true,
		AlwaysRESP2:       true, // sentinels of every version speak it
		DisableRetry:      true, // a fail-over asked twice is another fault
		ClientSetInfo:     rueidis.DisableClientSetInfo,
		Dialer:            net.Dialer{Timeout: commandTimeout},
		ConnWriteTimeout:  commandTimeout,
	}
	if sentinel {
		s.RueidisSentinel(&o, nil)
	} else {
		s.Rueidis(&o, nil)
		o.SelectDB = 0 // CLUSTER FAILOVER; a cluster has only database 0 anyway
	}
	c, err := rueidis.NewClient(o)
	if err != nil {
		return fmt.Errorf("%s: %s", addr, s.Redact(err.Error()))
	}
	defer c.Close()
	if err := c.Do(ctx, c.B().Arbitrary(args...).Build()).Error(); err != nil {
		return fmt.Errorf("%s: %s: %s", addr, strings.Join(args, " "), s.Redact(err.Error()))
	}
	return nil
}
