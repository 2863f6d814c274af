package lockcore

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine running: watchdogs, subscriptions
// and rueidis connections must all stop with Close. rueidis' cluster client closes connections
// it dropped from its slot map 5 s after a refresh, in a goroutine that outlives Close by design;
// that one is not ours to stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*clusterClient)._refresh.func2"))
}
