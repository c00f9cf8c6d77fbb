package parallel

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestForCoversEveryIndexOnce(t *testing.T) {
	t.Parallel()

	for _, threads := range []int{1, 2, 3, 8} {
		p := NewPool(threads)
		for _, n := range []int{0, 1, 2, 7, 16, 100, 1001} {
			for _, minChunk := range []int{0, 1, 16, 2000} {
				hits := make([]int32, n)
				p.For(n, minChunk, func(start, end int) {
					require.LessOrEqual(t, 0, start)
					require.LessOrEqual(t, end, n)
					for i := start; i < end; i++ {
						atomic.AddInt32(&hits[i], 1)
					}
				})
				for i, h := range hits {
					require.EqualValues(t, 1, h, "threads %d n %d index %d", threads, n, i)
				}
			}
		}
		require.Equal(t, threads, p.Threads())
		p.Close()
		p.Close() // twice is fine
	}
}

func TestForSpreadsWork(t *testing.T) {
	t.Parallel()

	p := NewPool(4)
	defer p.Close()
	var mu sync.Mutex
	var ranges [][2]int
	p.For(1000, 16, func(start, end int) {
		mu.Lock()
		ranges = append(ranges, [2]int{start, end})
		mu.Unlock()
	})
	slices.SortFunc(ranges, func(a, b [2]int) int { return a[0] - b[0] })
	require.Greater(t, len(ranges), 4, "1000 items over 4 threads: several ranges each")
	require.Equal(t, [2]int{0, 1000 / 8 / 16 * 16}, ranges[0], "the first claim takes 1/(2·threads) of the loop, in whole chunks")
	for i, r := range ranges {
		if i < len(ranges)-1 {
			require.Zero(t, (r[1]-r[0])%16, "range %v is not whole chunks of 16", r)
			require.Equal(t, r[1], ranges[i+1][0])
			require.GreaterOrEqual(t, r[1]-r[0], ranges[i+1][1]-ranges[i+1][0], "claims shrink")
		}
	}
	require.Equal(t, 1000, ranges[len(ranges)-1][1])
	var calls atomic.Int32
	p.For(16, 16, func(start, end int) { calls.Add(1) })
	require.EqualValues(t, 1, calls.Load(), "one chunk: the caller does it alone")
	calls.Store(0)
	p.For(17, 16, func(start, end int) { calls.Add(1) })
	require.EqualValues(t, 2, calls.Load(), "two chunks: two ranges")
}

func TestNilPoolRunsSerially(t *testing.T) {
	t.Parallel()

	var p *Pool
	sum := 0
	p.For(10, 1, func(start, end int) {
		for i := start; i < end; i++ {
			sum += i
		}
	})
	require.Equal(t, 45, sum)
}

// TestForAfterParking issues loops separated by pauses longer than the spin window, so the
// workers and the caller take the park-and-wake path as well as the spinning one.
func TestForAfterParking(t *testing.T) {
	t.Parallel()

	p := NewPool(3)
	defer p.Close()
	for round := 0; round < 6; round++ {
		if round%2 == 1 {
			time.Sleep(3 * spinFor)
		}
		var sum atomic.Int64
		p.For(300, 1, func(start, end int) {
			if round >= 2 && start == 0 {
				// One piece is slow: whoever does not hold it runs out of work and
				// either parks (a worker) or waits past the spin window (the caller).
				time.Sleep(3 * spinFor)
			}
			for i := start; i < end; i++ {
				sum.Add(int64(i))
			}
		})
		require.EqualValues(t, 299*300/2, sum.Load(), "round %d", round)
	}
}

// TestManyShortLoops is the decode pattern: thousands of tiny loops back to back.
func TestManyShortLoops(t *testing.T) {
	t.Parallel()

	p := NewPool(2)
	defer p.Close()
	out := make([]int, 64)
	for k := 0; k < 20000; k++ {
		p.For(len(out), 1, func(start, end int) {
			for i := start; i < end; i++ {
				out[i]++
			}
		})
	}
	for i, v := range out {
		require.Equal(t, 20000, v, "index %d", i)
	}
}

func TestForAfterCloseRunsOnCaller(t *testing.T) {
	t.Parallel()

	p := NewPool(4)
	p.Close()
	var calls atomic.Int32
	p.For(1000, 1, func(start, end int) {
		require.Equal(t, 0, start)
		require.Equal(t, 1000, end)
		calls.Add(1)
	})
	require.EqualValues(t, 1, calls.Load())
}

func BenchmarkForOverhead(b *testing.B) {
	p := NewPool(2)
	defer p.Close()
	var sink [2]int
	for b.Loop() {
		p.For(2, 1, func(start, end int) { sink[start]++ })
	}
}
