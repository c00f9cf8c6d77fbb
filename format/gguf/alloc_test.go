package gguf

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// allocated returns the bytes allocated while running fn.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestParseMemoryIsBounded feeds Parse files built to make it allocate as
// much as possible per input byte, and checks that it stays within a small
// multiple of the input size.
func TestParseMemoryIsBounded(t *testing.T) {
	const n = 1 << 15
	manyKeys := func() raw {
		r := header(3, 0, n)
		for i := range n {
			r = r.str(fmt.Sprintf("%04x", i)).u32(uint32(Uint8)).bytes(0)
		}
		return r
	}
	manyTensors := func() raw {
		r := header(3, n, 0)
		for i := range n {
			r = r.tensorInfo(fmt.Sprintf("%04x", i), []uint64{1}, I8, 0)
		}
		return r.pad(32).zeros(1)
	}
	manyStrings := func() raw {
		r := header(3, 0, 1).str("s").u32(uint32(Array)).u32(uint32(String)).u64(n)
		for range n {
			r = r.str("")
		}
		return r
	}
	manyNested := func(inner func(raw) raw) func() raw {
		return func() raw {
			r := header(3, 0, 1).str("a").u32(uint32(Array)).u32(uint32(Array)).u64(n)
			for range n {
				r = inner(r)
			}
			return r
		}
	}
	tests := []struct {
		name  string
		build func() raw
		valid bool
		limit float64 // allowed bytes allocated per input byte
	}{
		{"many keys", manyKeys, true, 10},
		{"many tensors", manyTensors, true, 10},
		{"many empty strings", manyStrings, true, 10},
		{"nested empty arrays", manyNested(func(r raw) raw { return r.u32(uint32(Uint8)).u64(0) }), true, 10},
		{"nested one-byte arrays", manyNested(func(r raw) raw { return r.u32(uint32(Uint8)).u64(1).bytes(0) }), true, 10},
		{"nested arrays of one string", manyNested(func(r raw) raw { return r.u32(uint32(String)).u64(1).str("") }), true, 10},
		{"huge claimed array", func() raw {
			return header(3, 0, 1).str("a").u32(uint32(Array)).u32(uint32(Uint8)).u64(math.MaxUint64).zeros(1 << 16)
		}, false, 1},
		{"huge claimed counts", func() raw { return header(3, 1<<40, 1<<40).zeros(1 << 16) }, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.build()
			var err error
			got := allocated(func() { _, err = Parse("alloc.gguf", data) })
			if tt.valid {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			perByte := float64(got) / float64(len(data))
			t.Logf("%d input bytes, %d allocated (%.1f per byte)", len(data), got, perByte)
			require.LessOrEqual(t, perByte, tt.limit)
		})
	}
}
