package cacheview

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHubDropsForASlowViewerOnly: a viewer that reads nothing loses what does not fit in its
// buffer (counted), a viewer that keeps up gets every event in order, and Publish never
// waits.
func TestHubDropsForASlowViewerOnly(t *testing.T) {
	h := NewHub(8)
	slow, fast := h.Subscribe(), h.Subscribe()
	require.Equal(t, 2, h.Viewers())
	var got []int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for e := range fast.Events() {
			got = append(got, e.N)
			if e.N == 1000 {
				return
			}
		}
	}()
	start := time.Now()
	for i := range 1000 {
		require.Equal(t, int64(i+1), h.Publish(Event{Kind: "alloc", Block: i}))
		if i%8 == 7 {
			// Let the fast reader drain, so that only the slow one falls behind.
			for len(fast.ch) > 0 {
				time.Sleep(10 * time.Microsecond)
			}
		}
	}
	wg.Wait()
	require.Less(t, time.Since(start), 10*time.Second)
	require.Len(t, got, 1000)
	for i, n := range got {
		require.Equal(t, int64(i+1), n)
	}
	require.Equal(t, int64(1000-8), slow.TakeDropped(), "the slow viewer kept its first 8")
	require.Zero(t, slow.TakeDropped(), "TakeDropped resets")
	require.Zero(t, fast.TakeDropped())
	first := <-slow.Events()
	require.Equal(t, int64(1), first.N)
	require.Equal(t, int64(1000), h.Published())

	h.Unsubscribe(slow)
	h.Unsubscribe(fast)
	require.Zero(t, h.Viewers())
	h.Publish(Event{}) // nobody listening: still numbered
	require.Equal(t, int64(1001), h.Published())
}

// TestHubConcurrentSubscribers: viewers come and go while one goroutine publishes (run with
// -race).
func TestHubConcurrentSubscribers(t *testing.T) {
	h := NewHub(4)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				s := h.Subscribe()
				for range 3 {
					select {
					case <-s.Events():
					case <-time.After(time.Millisecond):
					}
				}
				h.Unsubscribe(s)
			}
		}()
	}
	for i := range 20000 {
		h.Publish(Event{Block: i})
	}
	close(done)
	wg.Wait()
	require.Equal(t, int64(20000), h.Published())
	require.Zero(t, h.Viewers())
}
