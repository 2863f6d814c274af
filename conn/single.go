package conn

import (
	"context"
	"net"
	"time"

	"github.com/redis/rueidis"
)

// DefaultDialTimeout bounds connecting to a single node with SingleClient.
const DefaultDialTimeout = 5 * time.Second

// SingleClient returns a client of the one node at the first address of s (as New read it),
// with s's credentials, database and TLS: lockbench's own connections to a Redis that is not a
// data node of the run (a collection store, a referee). Commands are not retried, and dialling
// is bounded by timeout (DefaultDialTimeout if 0). Errors are rueidis'; pass them through
// Classify to name refused credentials or TLS. The client is safe for concurrent use; close it.
func (s *Settings) SingleClient(timeout time.Duration) (rueidis.Client, error) {
	if timeout <= 0 {
		timeout = DefaultDialTimeout
	}
	opt := rueidis.ClientOption{
		InitAddress:       s.Addrs(),
		ForceSingleClient: true,
		DisableCache:      true,
		DisableRetry:      true,
		ClientSetInfo:     rueidis.DisableClientSetInfo, // Redis before 7.2 refuses it
		Dialer:            net.Dialer{Timeout: timeout},
		ConnWriteTimeout:  timeout,
	}
	s.Rueidis(&opt, nil)
	return rueidis.NewClient(opt)
}

// OpenSingle is SingleClient followed by a PING, so that a server that cannot be reached or
// refuses the credentials or TLS fails here and not on first use; its errors are classified
// (see Classify).
func (s *Settings) OpenSingle(ctx context.Context) (rueidis.Client, error) {
	c, err := s.SingleClient(0)
	if err != nil {
		return nil, s.Classify(s.Addrs()[0], err)
	}
	if err := c.Do(ctx, c.B().Ping().Build()).Error(); err != nil {
		c.Close()
		return nil, s.Classify(s.Addrs()[0], err)
	}
	return c, nil
}
