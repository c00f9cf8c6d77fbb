package cacheview

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/kvcache"
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

// TestHubReplaysItsRing: a late viewer gets the events the ring still holds (after the
// number it asks from), a hello whose tally counts the ones before, and then the live ones;
// a slow viewer is told the kinds of the events it lost.
func TestHubReplaysItsRing(t *testing.T) {
	h := NewHubHistory(4, 10)
	kinds := []string{"alloc", "prefix_hit", "evict"}
	for i := range 25 {
		h.Publish(Event{Kind: kinds[i%3], Slots: i})
	}
	want := Tally{}
	for i := range 15 {
		want.add(kinds[i%3], 1, i)
	}
	s, replay, hello := h.SubscribeSince(0)
	require.Len(t, replay, 10)
	require.Equal(t, int64(16), replay[0].N)
	require.Equal(t, int64(25), replay[9].N)
	require.Equal(t, Hello{Published: 25, From: 15, History: 10, Tally: want}, hello)

	_, replay, hello = h.SubscribeSince(20)
	require.Len(t, replay, 5)
	require.Equal(t, int64(21), replay[0].N)
	require.Equal(t, int64(20), hello.From)
	_, replay, hello = h.SubscribeSince(-1)
	require.Empty(t, replay)
	require.Equal(t, int64(25), hello.From)
	require.EqualValues(t, 9, hello.Tally["alloc"].N)

	// s reads nothing: 4 fit in its buffer, 6 more are lost, and said by kind.
	for i := 25; i < 35; i++ {
		h.Publish(Event{Kind: kinds[i%3], Slots: 1})
	}
	require.Equal(t, int64(26), (<-s.Events()).N, "live after the replay")
	lost := s.TakeLost()
	var n int64
	for _, k := range lost {
		n += k.N
		require.Equal(t, k.N, k.Slots)
	}
	require.EqualValues(t, 6, n)
	require.Equal(t, Tally{"alloc": {2, 2}, "prefix_hit": {2, 2}, "evict": {2, 2}}, lost, "events 30..35 by kind")
	require.Empty(t, s.TakeLost())
}

// BenchmarkHubHistoryMemory reports what the ring of DefaultHistory events holds on the
// heap, per event (docs/serve.md's table), with a hash string on every event as indexed,
// prefix_hit and evict events carry.
func BenchmarkHubHistoryMemory(b *testing.B) {
	var heap float64
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		h := NewHubHistory(0, DefaultHistory)
		for i := range 2 * DefaultHistory {
			h.Publish(PoolEvent(kvcache.Event{Kind: kvcache.Indexed, Block: i, Hash: kvcache.Hash{byte(i), byte(i >> 8), 1}}))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap += float64(after.HeapAlloc) - float64(before.HeapAlloc)
		runtime.KeepAlive(h)
	}
	b.ReportMetric(heap/float64(b.N)/DefaultHistory, "heap-B/event")
}

// BenchmarkHubPublish is one Publish with no viewer, with and without the ring.
func BenchmarkHubPublish(b *testing.B) {
	for _, history := range []int{0, DefaultHistory} {
		b.Run(fmt.Sprintf("history=%d", history), func(b *testing.B) {
			h := NewHubHistory(0, history)
			e := PoolEvent(kvcache.Event{Kind: kvcache.Allocated, Block: 1})
			for range b.N {
				h.Publish(e)
			}
		})
	}
}

// TestKindIndexNamesEveryKind: every kind the pool and the scheduler emit has its own
// counter, and kindIndex and kindNames agree.
func TestKindIndexNamesEveryKind(t *testing.T) {
	for i, k := range kindNames {
		require.Equal(t, i, kindIndex(k), k)
	}
	for k := kvcache.EventKind(0); k <= kvcache.Reclaimed; k++ {
		require.NotEqual(t, numKinds-1, kindIndex(k.String()), k.String())
	}
	for _, k := range []string{"admit", "preempt", "fork_seq", "reset", "submit", "finish"} {
		require.NotEqual(t, numKinds-1, kindIndex(k), k)
	}
	require.Equal(t, numKinds-1, kindIndex("something new"))
}
