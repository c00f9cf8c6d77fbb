package attention

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/rng"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/quant"
)

// Decode attention at depth: one step's attention over every layer of a model's shape, with
// the cache spread over a pool larger than the caches of the CPU, as a decode step meets it.

// benchShape is a model's attention layout for the depth benchmarks.
type benchShape struct {
	name   string
	layers int
	shape  Shape
}

var benchShapes = []benchShape{
	{"stories110M", 12, Shape{Heads: 12, KVHeads: 12, HeadDim: 64}},
	{"TinyLlama", 22, Shape{Heads: 32, KVHeads: 4, HeadDim: 64}},
}

// depthFixture is a pool filled with random K/V and the block tables of seqs sequences:
// each holds the first shared positions in the same blocks (a shared prompt) and then
// depth-shared positions of its own. Blocks are handed out in a scrambled order, as a pool
// that has served for a while hands them out.
type depthFixture struct {
	pool  *kvcache.Pool
	rows  []Query
	q     []float32
	out   []float32
	bytes int64 // bytes of K/V the step's attention must read, each block once
}

func newDepthFixture(tb testing.TB, bs benchShape, ct quant.CacheType, seqs, depth, shared int) *depthFixture {
	const blockSize = kvcache.DefaultBlockSize
	s := bs.shape
	sharedBlocks := shared / blockSize
	ownBlocks := (depth - sharedBlocks*blockSize + blockSize - 1) / blockSize
	total := sharedBlocks + seqs*ownBlocks
	pool, err := kvcache.NewPool(kvcache.Config{Layers: bs.layers, KVHeads: s.KVHeads, HeadDim: s.HeadDim, BlockSize: blockSize, NumBlocks: total, KType: ct, VType: ct})
	require.NoError(tb, err)
	r := rng.New(uint64(depth))
	// A scrambled order of block ids: i·stride mod total with stride coprime to total.
	stride := 7919
	for gcd(stride, total) != 1 {
		stride++
	}
	next := 0
	take := func() int { id := next * stride % total; next++; return id }
	prefix := make([]int, sharedBlocks)
	for i := range prefix {
		prefix[i] = take()
	}
	row := make([]float32, s.KVHeads*s.HeadDim)
	fill := func(block int) {
		for l := range bs.layers {
			for slot := range blockSize {
				for j := range row {
					row[j] = r.Symmetric()
				}
				pool.WriteKV(l, block, slot, row, row)
			}
		}
	}
	for _, b := range prefix {
		fill(b)
	}
	f := &depthFixture{pool: pool}
	for seq := range seqs {
		table := append([]int(nil), prefix...)
		for range ownBlocks {
			b := take()
			fill(b)
			table = append(table, b)
		}
		f.rows = append(f.rows, Query{Seq: seq, Pos: depth - 1, Table: table})
	}
	qDim := s.Heads * s.HeadDim
	f.q = make([]float32, seqs*qDim)
	for i := range f.q {
		f.q[i] = r.Symmetric()
	}
	f.out = make([]float32, len(f.q))
	perToken := int64(bs.layers) * int64(pool.Config().KRowBytes()+pool.Config().VRowBytes())
	f.bytes = perToken * int64(sharedBlocks*blockSize+seqs*(depth-sharedBlocks*blockSize))
	return f
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// step runs one decode step's attention over every layer, on the calling thread.
func (f *depthFixture) step(s Shape) {
	for l := range f.pool.Config().Layers {
		PagedBatch(f.out, f.q, f.pool, l, f.rows, s, nil, nil)
	}
}

// comparePaths runs one step on each of the decode paths in turn, b.N times, on one locked
// OS thread, and reports each path's CPU time per step in ms ("NAME-ms") and the first
// path's over each other's ("NAME/FIRST"), all measured in the same run.
func comparePaths(b *testing.B, f *depthFixture, s Shape, paths []int, names []string) []time.Duration {
	defer func(p int) { decodePath = p }(decodePath)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := make([]time.Duration, len(paths))
	for _, p := range paths { // warm up
		decodePath = p
		f.step(s)
	}
	b.ResetTimer()
	for b.Loop() {
		for i, p := range paths {
			decodePath = p
			start := threadCPU()
			f.step(s)
			cpu[i] += threadCPU() - start
		}
	}
	for i, name := range names {
		b.ReportMetric(float64(cpu[i].Microseconds())/1e3/float64(b.N), name+"-ms")
		if i > 0 {
			b.ReportMetric(float64(cpu[i])/float64(cpu[0]), name+"/"+names[0])
		}
	}
	return cpu
}

// BenchmarkDecodeDepth times one decode step's attention, all layers, one sequence on one
// thread, for the shapes of stories110M (12 heads of 64) and TinyLlama (32 query heads over
// 4 KV heads of 64), three cache types and three depths: PagedHeads one KV group at a time
// ("perhead") against attendDecode ("stream"), in CPU time, alternating in one run. It
// reports the stream path's rate of reading the cache (GB/s of CPU time: the bytes the step
// must read over its time).
//
//	go test ./attention -run '^$' -bench DecodeDepth -benchtime 10x
func BenchmarkDecodeDepth(b *testing.B) {
	for _, bs := range benchShapes {
		for _, ct := range []quant.CacheType{quant.F32, quant.F16, quant.Q8_0} {
			for _, depth := range []int{32, 960, 3000} {
				b.Run(fmt.Sprintf("%s/%s/D=%d", bs.name, ct, depth), func(b *testing.B) {
					f := newDepthFixture(b, bs, ct, 1, depth, 0)
					cpu := comparePaths(b, f, bs.shape, []int{decodePerHead, decodeShared}, []string{"perhead", "stream"})
					b.ReportMetric(float64(f.bytes)*float64(b.N)/cpu[1].Seconds()/1e9, "stream-GB/s")
				})
			}
		}
	}
}

// BenchmarkDecodeSharedPrefix times one decode step's attention, all layers, of 16
// sequences that share a 1024-token prompt and hold 64 tokens of their own each (depth
// 1088), on one thread: PagedHeads per row and KV group ("perhead"), attendDecode per row
// ("perrow": every row reads the prompt's blocks) and attendDecode over the rows that share
// blocks ("shared": each block read once for all). It reports the bytes of K/V each way
// reads per step and the shared path's ratios, measured alternating in one run.
//
//	go test ./attention -run '^$' -bench DecodeSharedPrefix -benchtime 5x
func BenchmarkDecodeSharedPrefix(b *testing.B) {
	const seqs, prefix, depth = 16, 1024, 1088
	for _, bs := range benchShapes {
		for _, ct := range []quant.CacheType{quant.F16, quant.Q8_0} {
			b.Run(fmt.Sprintf("%s/%s/B=%d", bs.name, ct, seqs), func(b *testing.B) {
				f := newDepthFixture(b, bs, ct, seqs, depth, prefix)
				comparePaths(b, f, bs.shape, []int{decodePerRow, decodeShared, decodePerHead}, []string{"perrow", "shared", "perhead"})
				perToken := float64(f.bytes) / float64(prefix+seqs*(depth-prefix))
				b.ReportMetric(perToken*seqs*depth/1e6, "perrow-MB/step")
				b.ReportMetric(float64(f.bytes)/1e6, "shared-MB/step")
			})
		}
	}
}

// BenchmarkDecodeStream times the stream path alone, for profiles: one sequence at depth
// 960, and 16 that share a 1024-token prompt at depth 1088, on one thread.
func BenchmarkDecodeStream(b *testing.B) {
	for _, bs := range benchShapes {
		for _, ct := range []quant.CacheType{quant.F32, quant.F16, quant.Q8_0} {
			for _, c := range []struct{ seqs, depth, prefix int }{{1, 960, 0}, {16, 1088, 1024}} {
				b.Run(fmt.Sprintf("%s/%s/B=%d/D=%d", bs.name, ct, c.seqs, c.depth), func(b *testing.B) {
					f := newDepthFixture(b, bs, ct, c.seqs, c.depth, c.prefix)
					f.step(bs.shape)
					for b.Loop() {
						f.step(bs.shape)
					}
				})
			}
		}
	}
}

// BenchmarkPrefillSharedPrefix times one step's attention, all layers, on one thread, of
// requests that arrived together with a shared 1,024-token prompt: the first has computed it
// and decodes one row, the other 15 prefill their own 16 tokens after it (a run of 16 rows
// each over 1,040 positions). Short runs that share blocks join attendDecode's clusters
// ("joined": each shared block decoded once and scored for all 241 rows in one product)
// against each run on its own ("gathered": attendRun, which decodes all 1,040 positions of
// every run), alternating in one run.
//
//	go test ./attention -run '^$' -bench PrefillSharedPrefix -benchtime 5x
func BenchmarkPrefillSharedPrefix(b *testing.B) {
	const seqs, prefix, own = 16, 1024, 16
	for _, bs := range benchShapes {
		for _, ct := range []quant.CacheType{quant.F16, quant.Q8_0} {
			b.Run(fmt.Sprintf("%s/%s/B=%d", bs.name, ct, seqs), func(b *testing.B) {
				f := newDepthFixture(b, bs, ct, seqs, prefix+own, prefix)
				var rows []Query
				for i, r := range f.rows {
					for p := prefix; p < prefix+own; p++ {
						if i > 0 || p == prefix+own-1 {
							rows = append(rows, Query{Seq: r.Seq, Pos: p, Table: r.Table})
						}
					}
				}
				f.rows = rows
				qDim := bs.shape.Heads * bs.shape.HeadDim
				r := rng.New(3)
				f.q = make([]float32, len(rows)*qDim)
				for i := range f.q {
					f.q[i] = r.Symmetric()
				}
				f.out = make([]float32, len(f.q))
				defer func(j bool) { joinShared = j }(joinShared)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				ways := []bool{false, true}
				cpu := make([]time.Duration, len(ways))
				for _, j := range ways { // warm up
					joinShared = j
					f.step(bs.shape)
				}
				b.ResetTimer()
				for b.Loop() {
					for i, j := range ways {
						joinShared = j
						start := threadCPU()
						f.step(bs.shape)
						cpu[i] += threadCPU() - start
					}
				}
				b.ReportMetric(float64(cpu[0].Microseconds())/1e3/float64(b.N), "gathered-ms")
				b.ReportMetric(float64(cpu[1].Microseconds())/1e3/float64(b.N), "joined-ms")
				b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "joined/gathered")
			})
		}
	}
}
