package agentrt

import (
	"testing"
	"unsafe"
)

// TestRunStructSizeClass keeps a run within the allocator's 2688-byte size
// class: one field too many moves every Run to the 3072-byte class, 384
// bytes more to allocate and collect per Run (BenchmarkRunToolTurn's B/op).
// An object over 512 bytes that holds pointers carries an 8-byte header
// in the allocator (Go 1.22 on), so a run may have 2680 bytes.
func TestRunStructSizeClass(t *testing.T) {
	const limit = 2688 - 8
	if n := unsafe.Sizeof(run{}); n > limit {
		t.Fatalf("a run is %d bytes, over the %d that fit the 2688-byte size class: shrink it or move a rarely used field behind a pointer", n, limit)
	}
}
