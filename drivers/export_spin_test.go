package drivers

import "time"

// RedissonSpinSleeps returns the first n sleeps of a spin lock's back-off, for tests.
func RedissonSpinSleeps(n int) []time.Duration {
	b := redissonSpinBackOff{next: redissonSpinInitialDelay}
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = b.nextSleep()
	}
	return out
}
