package kvcache

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/pages"
	"github.com/kvref/kvref/quant"
)

// TestNewPoolRefusesMoreThanAvailable: a pool whose K/V storage is larger than the memory
// available is a *PoolTooLargeError naming the blocks, the bytes and how many blocks fit,
// made before anything is allocated; one that fits, or a machine whose available memory
// cannot be read, gets its pool.
func TestNewPoolRefusesMoreThanAvailable(t *testing.T) {
	old := availableMemory
	t.Cleanup(func() { availableMemory = old })
	cfg := Config{Layers: 2, KVHeads: 4, HeadDim: 64, BlockSize: 16, NumBlocks: 64, KType: quant.F16, VType: quant.F16}
	perBlock := cfg.BytesPerBlock() // 2 layers · 2 · 4 · 64 · 2 B · 16 slots = 32 KiB
	require.Equal(t, int64(32<<10), perBlock)

	availableMemory = func() (int64, string, error) { return 64*perBlock - 1, pages.SourceMemAvailable, nil }
	_, err := NewPool(cfg)
	var tooLarge *PoolTooLargeError
	require.ErrorAs(t, err, &tooLarge)
	require.Equal(t, PoolTooLargeError{Blocks: 64, BlockBytes: perBlock, Available: 64*perBlock - 1, Source: "MemAvailable"}, *tooLarge)
	require.EqualError(t, err, "kvcache: a pool of 64 blocks of 32768 B needs 2097152 B, more than the 2097151 B this machine has available (MemAvailable); "+
		"at most 63 blocks fit")

	availableMemory = func() (int64, string, error) { return 64 * perBlock, pages.SourceCgroup, nil }
	p, err := NewPool(cfg)
	require.NoError(t, err)
	require.Equal(t, 64*perBlock, p.AllocatedBytes())

	availableMemory = func() (int64, string, error) { return 0, "", errors.New("no /proc/meminfo here") }
	_, err = NewPool(cfg)
	require.NoError(t, err)
}

// TestNewPoolRefusesMoreThanThisMachine: on this machine (where MemAvailable can be read), a
// pool four times the memory available is refused instead of allocated: without the check
// the Go runtime dies of it ("fatal error: out of memory") or the kernel's OOM killer does.
func TestNewPoolRefusesMoreThanThisMachine(t *testing.T) {
	avail, _, err := pages.AvailableMemory()
	if err != nil {
		t.Skipf("no available memory to compare with here: %v", err)
	}
	cfg := Config{Layers: 32, KVHeads: 8, HeadDim: 128, BlockSize: 16, KType: quant.F32, VType: quant.F32}
	cfg.NumBlocks = int(4*avail/cfg.BytesPerBlock()) + 1
	_, err = NewPool(cfg)
	var tooLarge *PoolTooLargeError
	require.ErrorAs(t, err, &tooLarge)
	require.Greater(t, int64(tooLarge.Blocks)*tooLarge.BlockBytes, tooLarge.Available)
}
