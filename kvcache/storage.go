package kvcache

// The pool's K/V storage: per layer, one byte array of NumBlocks·BlockSize K rows and one of
// V rows, each row one token's kv_heads·head_dim values in the cache type's format. Slot s of
// block b is row b·BlockSize + s.

// allocateStorage allocates every layer's K and V rows.
func (p *Pool) allocateStorage() {
	slots := p.cfg.NumBlocks * p.cfg.BlockSize
	p.k = make([][]byte, p.cfg.Layers)
	p.v = make([][]byte, p.cfg.Layers)
	for l := range p.cfg.Layers {
		p.k[l] = make([]byte, slots*p.kRow)
		p.v[l] = make([]byte, slots*p.vRow)
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

// KRow returns the stored key row of one slot of one block in one layer.
func (p *Pool) KRow(layer, blockID, slot int) []byte {
	i := (blockID*p.cfg.BlockSize + slot) * p.kRow
	return p.k[layer][i : i+p.kRow : i+p.kRow]
}

// VRow returns the stored value row of one slot of one block in one layer.
func (p *Pool) VRow(layer, blockID, slot int) []byte {
	i := (blockID*p.cfg.BlockSize + slot) * p.vRow
	return p.v[layer][i : i+p.vRow : i+p.vRow]
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
