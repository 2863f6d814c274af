package resource

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine running: every client must be closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
