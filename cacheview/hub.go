package cacheview

import (
	"slices"
	"sync"
	"sync/atomic"
)

// DefaultBuffer is how many events a viewer may fall behind before it loses some.
const DefaultBuffer = 4096

// Hub hands every published event to every viewer without ever waiting for one: each
// viewer has a buffer of its own, and an event that does not fit is dropped for that viewer
// and counted (the stream then tells it how many it missed, and the page takes a fresh
// snapshot). Publish is safe to call from the engine's goroutine while viewers come and go.
type Hub struct {
	buffer    int
	published atomic.Int64
	mu        sync.Mutex                    // serialises Subscribe and Unsubscribe
	subs      atomic.Pointer[[]*Subscriber] // read without the lock by Publish
}

// Subscriber is one viewer's end of a Hub.
type Subscriber struct {
	ch      chan Event
	dropped atomic.Int64
}

// NewHub returns a hub whose viewers may each fall buffer events behind (≤ 0: DefaultBuffer).
func NewHub(buffer int) *Hub {
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	h := &Hub{buffer: buffer}
	h.subs.Store(&[]*Subscriber{})
	return h
}

// Publish numbers e and offers it to every viewer; a viewer whose buffer is full loses it.
// It never blocks. Events are numbered in the order of Publish calls, which one goroutine
// at a time makes (the engine's, or the stepper's under its lock). It returns e's number.
func (h *Hub) Publish(e Event) int64 {
	e.N = h.published.Add(1)
	for _, s := range *h.subs.Load() {
		select {
		case s.ch <- e:
		default:
			s.dropped.Add(1)
		}
	}
	return e.N
}

// Published is the number of events published so far (the N of the last one).
func (h *Hub) Published() int64 { return h.published.Load() }

// Viewers is the number of subscribers.
func (h *Hub) Viewers() int { return len(*h.subs.Load()) }

// Subscribe adds a viewer. Call Unsubscribe when it goes away.
func (h *Hub) Subscribe() *Subscriber {
	s := &Subscriber{ch: make(chan Event, h.buffer)}
	h.mu.Lock()
	defer h.mu.Unlock()
	subs := append(slices.Clone(*h.subs.Load()), s)
	h.subs.Store(&subs)
	return s
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
