package cacheview

import (
	"slices"
	"sync"
	"sync/atomic"
)

// DefaultBuffer is how many events a viewer may fall behind before it loses some.
const DefaultBuffer = 4096

// DefaultHistory is how many recent events a hub keeps for the pages that open later
// (kvref serve --view-history).
const DefaultHistory = 4096

// Hub hands every published event to every viewer without ever waiting for one: each
// viewer has a buffer of its own, and an event that does not fit is dropped for that viewer
// and counted by kind (the stream then tells it how many it missed, and the page takes a
// fresh snapshot). It also keeps the last History events in a ring and a tally of every
// event by kind, so that a page that opens late replays the recent story and still counts
// everything. Publish is safe to call from the engine's goroutine while viewers come and go;
// it takes a lock that only Subscribe and Unsubscribe share, for as long as a copy of the
// ring.
type Hub struct {
	buffer    int
	published atomic.Int64
	mu        sync.Mutex // serialises Publish's ring and tally with Subscribe's replay
	subs      atomic.Pointer[[]*Subscriber]
	ring      []Event // the last len(ring) ≤ history events; the oldest at ring[start]
	start     int
	history   int
	tally     [numKinds]KindTally // every event published, by kind
}

// Subscriber is one viewer's end of a Hub.
type Subscriber struct {
	ch      chan Event
	dropped atomic.Int64
	lost    [numKinds]struct{ n, slots atomic.Int64 } // the dropped events by kind
}

// NewHub returns a hub whose viewers may each fall buffer events behind (≤ 0: DefaultBuffer)
// and that keeps the last DefaultHistory events.
func NewHub(buffer int) *Hub { return NewHubHistory(buffer, DefaultHistory) }

// NewHubHistory returns a hub whose viewers may each fall buffer events behind (≤ 0:
// DefaultBuffer) and that keeps the last history events for late viewers (0: none; < 0:
// DefaultHistory).
func NewHubHistory(buffer, history int) *Hub {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	if history < 0 {
		history = DefaultHistory
	}
	h := &Hub{buffer: buffer, history: history}
	h.subs.Store(&[]*Subscriber{})
	return h
}

// History is how many recent events the hub keeps.
func (h *Hub) History() int { return h.history }

// Publish numbers e, keeps it in the ring, counts it, and offers it to every viewer; a
// viewer whose buffer is full loses it. It never waits for a viewer. Events are numbered in
// the order of Publish calls, which one goroutine at a time makes (the engine's, or the
// stepper's under its lock). It returns e's number.
func (h *Hub) Publish(e Event) int64 {
	h.mu.Lock()
	e.N = h.published.Load() + 1
	if h.history > 0 {
		if len(h.ring) < h.history {
			h.ring = append(h.ring, e)
		} else {
			h.ring[h.start] = e
			h.start = (h.start + 1) % h.history
		}
	}
	k := kindIndex(e.Kind)
	h.tally[k].N++
	h.tally[k].Slots += int64(e.Slots)
	h.published.Store(e.N)
	subs := *h.subs.Load() // a viewer that subscribes after the unlock has e in its replay
	h.mu.Unlock()
	for _, s := range subs {
		select {
		case s.ch <- e:
		default:
			s.dropped.Add(1)
			s.lost[k].n.Add(1)
			s.lost[k].slots.Add(int64(e.Slots))
		}
	}
	return e.N
}

// Retract takes the events numbered from on out of the ring and the tally, for a stepper's
// undo: the command that published them has been taken back, so a page that opens later
// neither replays nor counts them. Their numbers are not given out again; viewers that
// already have them keep them (the undo's answer tells its page what to forget).
func (h *Hub) Retract(from int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.ring)
	kept := make([]Event, 0, n)
	for i := range n {
		e := h.ring[(h.start+i)%n]
		if e.N < from {
			kept = append(kept, e)
			continue
		}
		k := kindIndex(e.Kind)
		h.tally[k].N--
		h.tally[k].Slots -= int64(e.Slots)
	}
	h.ring, h.start = kept, 0
}

// Published is the number of events published so far (the N of the last one).
func (h *Hub) Published() int64 { return h.published.Load() }

// Viewers is the number of subscribers.
func (h *Hub) Viewers() int { return len(*h.subs.Load()) }

// Subscribe adds a viewer that gets the events published from now on. Call Unsubscribe
// when it goes away.
func (h *Hub) Subscribe() *Subscriber {
	s, _, _ := h.SubscribeSince(-1)
	return s
}

// Hello is where a viewer's stream starts: the events numbered From+1 .. Published are
// replayed from the ring, later ones follow live, and Tally counts, by kind, every event
// numbered up to From (the ones the viewer will not see).
type Hello struct {
	Published int64 `json:"published"` // events published before the viewer subscribed
	From      int64 `json:"from"`      // the stream's events are numbered from From+1
	History   int   `json:"history"`   // the hub's ring size
	Tally     Tally `json:"tally"`
}

// SubscribeSince adds a viewer and returns the events after number since that the ring
// still holds (all of them for since 0, none for since < 0) with the stream's Hello. No event
// is both replayed and sent live, and none is missed between the two.
func (h *Hub) SubscribeSince(since int64) (*Subscriber, []Event, Hello) {
	s := &Subscriber{ch: make(chan Event, h.buffer)}
	h.mu.Lock()
	defer h.mu.Unlock()
	pub := h.published.Load()
	var replay []Event
	if since >= 0 && since < pub {
		n := len(h.ring)
		for i := range n {
			if e := h.ring[(h.start+i)%n]; e.N > since {
				replay = append(replay, e)
			}
		}
	}
	tally := h.tally
	hello := Hello{Published: pub, From: pub, History: h.history, Tally: Tally{}}
	if len(replay) > 0 {
		hello.From = replay[0].N - 1
		for _, e := range replay {
			k := kindIndex(e.Kind)
			tally[k].N--
			tally[k].Slots -= int64(e.Slots)
		}
	}
	for k, t := range tally {
		if t.N != 0 || t.Slots != 0 {
			hello.Tally[kindNames[k]] = t
		}
	}
	subs := append(slices.Clone(*h.subs.Load()), s)
	h.subs.Store(&subs)
	return s, replay, hello
}

// Unsubscribe removes a viewer.
func (h *Hub) Unsubscribe(s *Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := slices.DeleteFunc(slices.Clone(*h.subs.Load()), func(x *Subscriber) bool { return x == s })
	h.subs.Store(&subs)
}

// Events is the viewer's channel of events.
func (s *Subscriber) Events() <-chan Event { return s.ch }

// TakeDropped returns how many events the viewer has lost since the last call.
func (s *Subscriber) TakeDropped() int64 { return s.dropped.Swap(0) }

// TakeLost returns the events the viewer has lost since the last call, by kind.
func (s *Subscriber) TakeLost() Tally {
	t := Tally{}
	for k := range s.lost {
		n, slots := s.lost[k].n.Swap(0), s.lost[k].slots.Swap(0)
		if n != 0 {
			t[kindNames[k]] = KindTally{N: n, Slots: slots}
		}
	}
	return t
}

// Tally counts events by kind: how many, and the sum of their Slots (for prefix_hit, the
// tokens reused; for cow, the slots copied).
type Tally map[string]KindTally

// KindTally is one kind's count and sum of Slots.
type KindTally struct {
	N     int64 `json:"n"`
	Slots int64 `json:"slots"`
}

func (t Tally) add(kind string, n, slots int) {
	k := t[kind]
	k.N += int64(n)
	k.Slots += int64(slots)
	if k.N == 0 && k.Slots == 0 {
		delete(t, kind)
		return
	}
	t[kind] = k
}

// kindNames are the kinds of events; a kind not listed counts as "other" (in order:
// kindIndex's cases).
var kindNames = [...]string{"alloc", "prefix_hit", "cow", "evict", "indexed", "release", "fork", "flush", "reclaim",
	"admit", "preempt", "fork_seq", "reset", "submit", "finish", "other"}

const numKinds = len(kindNames)

func kindIndex(kind string) int {
	switch kind {
	case "alloc":
		return 0
	case "prefix_hit":
		return 1
	case "cow":
		return 2
	case "evict":
		return 3
	case "indexed":
		return 4
	case "release":
		return 5
	case "fork":
		return 6
	case "flush":
		return 7
	case "reclaim":
		return 8
	case "admit":
		return 9
	case "preempt":
		return 10
	case "fork_seq":
		return 11
	case "reset":
		return 12
	case "submit":
		return 13
	case "finish":
		return 14
	}
	return numKinds - 1
}
