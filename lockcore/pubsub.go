package lockcore

import (
	"context"
	"fmt"
	"strings"
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
	info, err := rdb.Do(ctx, rdb.B().Info().Section("server").Build()).ToString()
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
		return c.rdb.B().Ssubscribe().Channel(channel).Build()
	}
	return c.rdb.B().Subscribe().Channel(channel).Build()
}

func (c *Client) unsubscribeCmd(channel string) rueidis.Completed {
	if c.pubsub == PubSubSharded {
		return c.rdb.B().Sunsubscribe().Channel(channel).Build()
	}
	return c.rdb.B().Unsubscribe().Channel(channel).Build()
}

func (c *Client) subscribedKind() string {
	if c.pubsub == PubSubSharded {
		return "ssubscribe"
	}
	return "subscribe"
}
