package kvcache

// EventKind says what happened to a block.
type EventKind uint8

// The things that happen to blocks. Every change of a block's state is one event, so that a
// viewer can follow the pool without diffing snapshots.
const (
	Allocated     EventKind = iota // a block (free, or just evicted) joins a sequence's table for new slots
	PrefixHit                      // a new sequence reuses a cached full block for its prompt
	CopiedOnWrite                  // a shared block is copied into a private one before a write
	Evicted                        // an unreferenced cached block is reclaimed for another use
	Indexed                        // a block became full and joined the prefix index
	Released                       // a sequence dropped its reference (Free); Ref says what is left
	Forked                         // a fork took a reference to one of its parent's blocks
	Flushed                        // Flush dropped a cached block from the index
	Reclaimed                      // a block fell out of a sequence's attention window and was released (Reclaim)
)

var eventNames = [...]string{"alloc", "prefix_hit", "cow", "evict", "indexed", "release", "fork", "flush", "reclaim"}

// String names the kind ("alloc", "prefix_hit", "cow", "evict", ...), as JSON shows it.
func (k EventKind) String() string { return eventNames[k] }

// MarshalText spells the kind by its name.
func (k EventKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// Event is one change of one block.
type Event struct {
	Kind  EventKind `json:"kind"`
	Seq   int       `json:"seq"`   // the sequence concerned (-1: none, as in a flush)
	Group int       `json:"group"` // the cache group whose layers the block holds (always 0 for a uniform model)
	Block int       `json:"block"` // the block
	Index int       `json:"index"` // the block's place in the sequence's table (-1: none)
	From  int       `json:"from"`  // CopiedOnWrite: the shared block copied from (else -1)
	Slots int       `json:"slots"` // CopiedOnWrite: slots copied; PrefixHit: tokens reused
	Ref   int       `json:"ref"`   // the block's reference count after the event
	Hash  Hash      `json:"-"`     // PrefixHit, Indexed, Evicted: the block's chain hash
}

// Reservation is what one Reserve did: the blocks it appended to the tables, the
// copy-on-write copies it made and the cached blocks it evicted to do so, in order (group by
// group). The events carry their group (Event.Group).
type Reservation struct {
	New       []int   // blocks appended to the sequence's tables
	NewGroups []int   // the cache group of each block of New
	Copies    []Event // CopiedOnWrite events: From, Block (the copy), Slots, Index, Group
	Evictions []Event // Evicted events: Block, Hash, Group (the group that held it)
}

// Empty reports whether the reservation changed nothing.
func (r Reservation) Empty() bool {
	return len(r.New) == 0 && len(r.Copies) == 0 && len(r.Evictions) == 0
}

// SetObserver installs fn (nil removes it), called synchronously with every event of every
// verb, in order. It runs on the caller's goroutine while the pool is being changed: it must
// be quick and must not call back into the pool (copy what it needs, or hand it to a channel
// that drops when full).
func (p *Pool) SetObserver(fn func(Event)) { p.observer = fn }

// event returns an event of kind about block id of sequence seq, with no index and no source,
// and the block's current reference count.
func (p *Pool) event(kind EventKind, seq, id int) Event {
	return Event{Kind: kind, Seq: seq, Group: p.blocks[id].group, Block: id, Index: -1, From: -1, Ref: p.blocks[id].ref}
}

// emit passes an event to the observer.
func (p *Pool) emit(e Event) {
	if p.observer != nil {
		p.observer(e)
	}
}
