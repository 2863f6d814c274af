package faults

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// commandTimeout bounds a fail-over command, its dial included.
const commandTimeout = 3 * time.Second

// command sends one command to the node at addr on a connection of its own, and fails on an
// error reply.
func command(ctx context.Context, addr string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:       []string{addr},
		ForceSingleClient: true, // this node, whatever it is
		DisableCache:      true,
		AlwaysRESP2:       true, // sentinels of every version speak it
		DisableRetry:      true, // a fail-over asked twice is another fault
		ClientSetInfo:     rueidis.DisableClientSetInfo,
		Dialer:            net.Dialer{Timeout: commandTimeout},
		ConnWriteTimeout:  commandTimeout,
	})
	if err != nil {
		return fmt.Errorf("%s: %w", addr, err)
	}
	defer c.Close()
	if err := c.Do(ctx, c.B().Arbitrary(args...).Build()).Error(); err != nil {
		return fmt.Errorf("%s: %s: %w", addr, strings.Join(args, " "), err)
	}
	return nil
}
