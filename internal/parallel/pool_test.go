package parallel

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestForCoversEveryIndexOnce(t *testing.T) {
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
	p := NewPool(4)
	defer p.Close()
	var calls atomic.Int32
	p.For(1000, 1, func(start, end int) { calls.Add(1) })
	require.EqualValues(t, 4, calls.Load(), "1000 items over 4 threads: 4 ranges")
	calls.Store(0)
	p.For(10, 16, func(start, end int) { calls.Add(1) })
	require.EqualValues(t, 1, calls.Load(), "below the minimum chunk the caller does it alone")
}

func TestNilPoolRunsSerially(t *testing.T) {
	var p *Pool
	sum := 0
	p.For(10, 1, func(start, end int) {
		for i := start; i < end; i++ {
			sum += i
		}
	})
	require.Equal(t, 45, sum)
}
