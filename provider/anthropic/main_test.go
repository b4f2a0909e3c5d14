package anthropic

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine outlives the tests: every stream is
// closed, every cancelled call has returned.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
