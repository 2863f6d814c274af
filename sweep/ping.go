package sweep

import (
	"context"
	"errors"
	"net"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/conn"
	"github.com/lockbench/lockbench/drivers"
)

// Pinger is a plain connection of its own to one data node, for Options.Ping: used one call at
// a time, rueidis sends each PING and reads its answer on the caller's goroutine, so the round
// trip it times is the network's and the server's, with no pipeline between. It is safe for
// concurrent use, but concurrent calls time each other.
type Pinger struct {
	c rueidis.Client
	s *conn.Settings
}

// NewPinger connects to the data node at addr (the master the drivers lock on) with settings'
// credentials, database and TLS (nil: none), dialing through via when it is not nil (the
// --net conditions the drivers' connections go through), as the drivers connect.
func NewPinger(addr string, settings *conn.Settings, via conn.DialFunc) (*Pinger, error) {
	opt := rueidis.ClientOption{
		InitAddress:       []string{addr},
		ForceSingleClient: true,
		DisableCache:      true,
		DisableRetry:      true,
		ClientSetInfo:     rueidis.DisableClientSetInfo, // Redis before 7.2 refuses it
		Dialer:            net.Dialer{Timeout: drivers.ConnectTimeout},
		ConnWriteTimeout:  drivers.ReplyTimeout,
	}
	settings.Rueidis(&opt, via)
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, settings.Classify(addr, err)
	}
	return &Pinger{c: c, s: settings}, nil
}

// Ping sends one PING and waits for its answer. Give ctx a deadline and no other cancel: rueidis
// then makes the call on this goroutine (see MeasureRoundTrip). An error's text never holds
// the password: it goes into the result file.
func (p *Pinger) Ping(ctx context.Context) error {
	if err := p.c.Do(ctx, p.c.B().Ping().Build()).Error(); err != nil {
		return errors.New(p.s.Redact(err.Error()))
	}
	return nil
}

// Close closes the connection.
func (p *Pinger) Close() { p.c.Close() }
