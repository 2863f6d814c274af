package lockcore

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine running: watchdogs, subscriptions
// and rueidis connections must all stop with Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
