package kvcache

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/pages"
	"github.com/kvref/kvref/quant"
)

// TestNewPoolMapsItsPages: a new pool's K/V storage is resident before anything is written
// to it (pages.Resident), so that no step takes its first writes' page faults. A kernel
// that does not populate pages on request leaves nothing to check.
func TestNewPoolMapsItsPages(t *testing.T) {
	if !pages.Populate(make([]byte, 3<<12)) {
		t.Skip("this kernel does not populate pages on request (MADV_POPULATE_WRITE, Linux 5.14)")
	}
	p, err := NewPool(Config{Layers: 2, KVHeads: 4, HeadDim: 64, BlockSize: 16, NumBlocks: 256, KType: quant.F16, VType: quant.F16})
	require.NoError(t, err)
	for l := range p.k {
		for _, b := range [][]byte{p.k[l], p.v[l]} {
			resident, total, err := pages.Resident(b)
			require.NoError(t, err)
			require.Equal(t, total, resident, "layer %d: pages of %d bytes of storage resident", l, len(b))
		}
	}
}
