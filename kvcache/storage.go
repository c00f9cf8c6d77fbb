package kvcache

import (
	"fmt"

	"github.com/kvref/kvref/internal/pages"
)

// The pool's K/V storage: per layer a block holds (Config.BlockLayers: every layer for a
// uniform model, one group's layers with groups), one byte array of NumBlocks·BlockSize K
// rows and one of V rows, each row one token's kv_heads·head_dim values in the cache type's
// format. Slot s of block b is row b·BlockSize + s; model layer l is array layerAt[l] (its
// place in its group), so the block a group's table names holds that group's layers.

// allocateStorage allocates the K and V rows of every layer a block holds, and maps their
// pages now (pages.Populate), as llama.cpp clears its cache when it makes it: otherwise the
// first write to each 4 KiB of a block is a page fault in the middle of a step (3 ms of a
// 45 ms decode step at C = 16 in a virtual machine, a tenth of a 1,024-token prefill).
func (p *Pool) allocateStorage() {
	slots := p.cfg.NumBlocks * p.cfg.BlockSize
	n := p.cfg.BlockLayers()
	p.k = make([][]byte, n)
	p.v = make([][]byte, n)
	for l := range n {
		p.k[l] = make([]byte, slots*p.kRow)
		p.v[l] = make([]byte, slots*p.vRow)
		pages.Populate(p.k[l])
		pages.Populate(p.v[l])
	}
}

// AllocatedBytes is the size of the pool's K/V storage: NumBlocks · BytesPerBlock.
func (p *Pool) AllocatedBytes() int64 {
	var n int64
	for l := range p.k {
		n += int64(len(p.k[l]) + len(p.v[l]))
	}
	return n
}

// KRow returns the stored key row of one slot of one block in one layer (the block must be
// one of the layer's group).
func (p *Pool) KRow(layer, blockID, slot int) []byte {
	i := (blockID*p.cfg.BlockSize + slot) * p.kRow
	return p.k[p.layerAt[layer]][i : i+p.kRow : i+p.kRow]
}

// VRow returns the stored value row of one slot of one block in one layer.
func (p *Pool) VRow(layer, blockID, slot int) []byte {
	i := (blockID*p.cfg.BlockSize + slot) * p.vRow
	return p.v[p.layerAt[layer]][i : i+p.vRow : i+p.vRow]
}

// KRows returns the stored key rows of count consecutive slots of one block in one layer,
// from slot on: one run of bytes, the rows one after another (KRow's for each slot).
func (p *Pool) KRows(layer, blockID, slot, count int) []byte {
	p.checkSlots("KRows", slot, count)
	i := (blockID*p.cfg.BlockSize + slot) * p.kRow
	return p.k[p.layerAt[layer]][i : i+count*p.kRow : i+count*p.kRow]
}

// VRows is KRows for the value rows.
func (p *Pool) VRows(layer, blockID, slot, count int) []byte {
	p.checkSlots("VRows", slot, count)
	i := (blockID*p.cfg.BlockSize + slot) * p.vRow
	return p.v[p.layerAt[layer]][i : i+count*p.vRow : i+count*p.vRow]
}

// checkSlots panics unless slots [slot, slot+count) lie in one block: the rows of the next
// block belong to another sequence, or to nobody.
func (p *Pool) checkSlots(what string, slot, count int) {
	if slot < 0 || count < 0 || slot+count > p.cfg.BlockSize {
		panic(fmt.Sprintf("kvcache: %s: slots [%d, %d) are not within a block of %d", what, slot, slot+count, p.cfg.BlockSize))
	}
}

// WriteKV quantizes k and v (kv_heads·head_dim values each) into a slot of one layer.
func (p *Pool) WriteKV(layer, blockID, slot int, k, v []float32) {
	p.cfg.KType.Encode(p.KRow(layer, blockID, slot), k, p.cfg.KVHeads, p.cfg.HeadDim)
	p.cfg.VType.Encode(p.VRow(layer, blockID, slot), v, p.cfg.KVHeads, p.cfg.HeadDim)
}

// copyBlock copies the first n slots of every layer's K and V from src to dst.
func (p *Pool) copyBlock(dst, src, n int) {
	bs := p.cfg.BlockSize
	for l := range p.k {
		copy(p.k[l][dst*bs*p.kRow:(dst*bs+n)*p.kRow], p.k[l][src*bs*p.kRow:(src*bs+n)*p.kRow])
		copy(p.v[l][dst*bs*p.vRow:(dst*bs+n)*p.vRow], p.v[l][src*bs*p.vRow:(src*bs+n)*p.vRow])
	}
}
