package kvcache

// The eviction order: unreferenced full blocks that stay in the prefix index (cached) are
// kept in a doubly linked list through block.prev/next, least recently released first.
// allocate evicts from the head when no block is free; a prefix hit takes a block out of the
// list again.

// lruPush appends a block that just became unreferenced at the tail (most recent).
func (p *Pool) lruPush(id int) {
	b := &p.blocks[id]
	b.inLRU = true
	b.prev, b.next = p.lruTail, -1
	if p.lruTail >= 0 {
		p.blocks[p.lruTail].next = id
	} else {
		p.lruHead = id
	}
	p.lruTail = id
	p.lruLen++
}

// lruRemove unlinks a block from the list (evicted, or referenced again by a prefix hit).
func (p *Pool) lruRemove(id int) {
	b := &p.blocks[id]
	if b.prev >= 0 {
		p.blocks[b.prev].next = b.next
	} else {
		p.lruHead = b.next
	}
	if b.next >= 0 {
		p.blocks[b.next].prev = b.prev
	} else {
		p.lruTail = b.prev
	}
	b.prev, b.next, b.inLRU = -1, -1, false
	p.lruLen--
}
