package lockcore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// PubSubMode says how unlock messages travel: classic PUBLISH/SUBSCRIBE, or sharded
// SPUBLISH/SSUBSCRIBE, which a Redis 7 cluster delivers within the lock's shard instead of
// broadcasting every message over the cluster bus to every node.
type PubSubMode int

const (
	// PubSubAuto picks sharded pub/sub on a Redis 7+ cluster and classic otherwise, as Redisson
	// (3.22 and later) does. It asks the server once, in New.
	PubSubAuto PubSubMode = iota
	// PubSubClassic always uses PUBLISH and SUBSCRIBE.
	PubSubClassic
	// PubSubSharded always uses SPUBLISH and SSUBSCRIBE (Redis 7+).
	PubSubSharded
)

// String returns "auto", "classic" or "sharded".
func (m PubSubMode) String() string {
	switch m {
	case PubSubAuto:
		return "auto"
	case PubSubClassic:
		return "classic"
	case PubSubSharded:
		return "sharded"
	}
	return fmt.Sprintf("PubSubMode(%d)", int(m))
}

// detectTimeout bounds the one server query PubSubAuto makes in New.
const detectTimeout = 5 * time.Second

// detectPubSub resolves PubSubAuto by asking the server whether it is a cluster node and which
// version it runs. A server that refuses CLUSTER INFO (standalone, sentinel-managed) is classic.
func detectPubSub(rdb rueidis.Client) (PubSubMode, error) {
	ctx, cancel := context.WithTimeout(context.Background(), detectTimeout)
	defer cancel()
	info, err := rdb.Do(ctx, rdb.B().Info().Section("server").Build().Pin()).ToString()
	if err != nil {
		return 0, fmt.Errorf("lockcore: ask the server for its version: %w", err)
	}
	if !strings.Contains(info, "redis_mode:cluster") {
		return PubSubClassic, nil
	}
	major := 0
	if v, ok := infoField(info, "redis_version"); ok {
		fmt.Sscanf(v, "%d", &major)
	}
	if major >= 7 {
		return PubSubSharded, nil
	}
	return PubSubClassic, nil
}

// infoField returns the value of "name:value" in an INFO reply.
func infoField(info, name string) (string, bool) {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v, true
		}
	}
	return "", false
}

// subscribeCmd, unsubscribeCmd and the confirmation kind for c's pub/sub mode.
func (c *Client) subscribeCmd(channel string) rueidis.Completed {
	if c.pubsub == PubSubSharded {
		return c.rdb.B().Ssubscribe().Channel(channel).Build().Pin()
	}
	return c.rdb.B().Subscribe().Channel(channel).Build().Pin()
}

func (c *Client) unsubscribeCmd(channel string) rueidis.Completed {
	if c.pubsub == PubSubSharded {
		return c.rdb.B().Sunsubscribe().Channel(channel).Build().Pin()
	}
	return c.rdb.B().Unsubscribe().Channel(channel).Build().Pin()
}

func (c *Client) subscribedKind() string {
	if c.pubsub == PubSubSharded {
		return "ssubscribe"
	}
	return "subscribe"
}

// subscribeRefusals counts the server's refusals of a waiter's (S)SUBSCRIBE, e.g. NOPERM for an
// ACL user without it, and keeps the first reply. Waiters still get their locks, by retrying
// after the TTL, only slowly: without this count a refused subscription went unreported
// (issue 36). Its methods are safe for concurrent use.
type subscribeRefusals struct {
	n     atomic.Int64
	first atomic.Pointer[string]
}

// add counts err if it is the server's error reply; a lost connection or a closed client is no
// refusal, and is retried as before.
func (r *subscribeRefusals) add(err error) {
	var re *rueidis.RedisError
	if !errors.As(err, &re) {
		return
	}
	r.n.Add(1)
	msg := err.Error()
	r.first.CompareAndSwap(nil, &msg)
}

// SubscribeRefusals returns how many of the waiters' (S)SUBSCRIBE commands the server refused so
// far (an error reply, such as NOPERM from an ACL user without the command or channel), and the
// first refusal's message ("" when none). Waiters whose subscription is refused still acquire,
// by polling at the lock's TTL, so a caller that wants to know must ask.
func (c *Client) SubscribeRefusals() (n int64, first string) {
	if p := c.waiters.refused.first.Load(); p != nil {
		first = *p
	}
	return c.waiters.refused.n.Load(), first
}
