package bench

import (
	"errors"
	"strconv"
	"time"
)

// ParseStartAt reads a worker's common start time as WorkerSpec.Args writes it (RFC 3339 with
// nanoseconds) and as people and orchestrators give it: any RFC 3339 time, or Unix seconds with
// an optional fraction ($(date +%s)). The time is in UTC. It is safe for concurrent use.
func ParseStartAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	sec, err := strconv.ParseFloat(s, 64)
	if err != nil || sec <= 0 || sec > 1e11 { // 1e11 s: year 5138, a typo in milliseconds
		return time.Time{}, errors.New("bad time")
	}
	return time.Unix(0, int64(sec*1e9)).UTC(), nil
}
