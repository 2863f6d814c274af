package bench

import "testing"

// Addresses on this host's loopback are out of a generator container's reach, in every form an
// address takes.
func TestOnLoopback(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"127.0.0.1:6379":              true,
		"localhost:6379":              true,
		"[::1]:6379":                  true,
		"redis://127.0.0.1:6379":      true,
		"rediss://user:pw@localhost/": true,
		"localhost":                   true,
		"10.0.0.5:6379":               false,
		"redis://10.0.0.5:6379/0":     false,
		"redis.internal:6379":         false,
		"redis://%zz":                 false,
	} {
		if got := OnLoopback(addr); got != want {
			t.Errorf("OnLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
