package agentrt

import (
	"testing"
	"unsafe"
)

// TestRunStructSizeClass keeps a run within the allocator's 2688-byte size
// class: one field too many moves every Run to the 3072-byte class, 384
// bytes more to allocate and collect per Run (BenchmarkRunToolTurn's B/op).
func TestRunStructSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(run{}); n > 2688 {
		t.Fatalf("a run is %d bytes, over the 2688-byte size class: shrink it or move a rarely used field behind a pointer", n)
	}
}
