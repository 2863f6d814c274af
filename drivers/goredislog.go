package drivers

import (
	"context"
	"fmt"
	"log"
	"os"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// go-redis logs every failed dial from every pooled connection; with a dead server and 64
// workers that is a flood on stderr. The errors are counted by the workloads anyway, so the log
// keeps one line a second and says how many it dropped.
func init() { redis.SetLogger(&rateLimitedLogger{l: log.New(os.Stderr, "go-redis: ", log.LstdFlags)}) }

type rateLimitedLogger struct {
	mu      sync.Mutex
	l       *log.Logger
	last    time.Time
	dropped int
}

func (r *rateLimitedLogger) Printf(_ context.Context, format string, v ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); now.Sub(r.last) >= time.Second {
		msg := fmt.Sprintf(format, v...)
		if r.dropped > 0 {
			msg += fmt.Sprintf(" (%d similar messages dropped)", r.dropped)
		}
		r.l.Print(msg)
		r.last, r.dropped = now, 0
		return
	}
	r.dropped++
}
