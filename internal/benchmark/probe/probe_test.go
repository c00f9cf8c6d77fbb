package probe

import (
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/kernels"
)

// TestStreamReadSumsEverything: the bandwidth probe reads every element, whatever the
// length (whole 256-byte blocks for the assembly, and the rest), at every kernel level.
//
// Not parallel: kernels.Restrict sets the level of the whole process.
func TestStreamReadSumsEverything(t *testing.T) {
	for _, level := range kernels.Levels() {
		t.Run(level, func(t *testing.T) {
			prev, err := kernels.Restrict(level)
			require.NoError(t, err)
			defer kernels.Restrict(prev) //nolint:errcheck // prev came from Restrict
			for _, n := range []int{0, 1, 7, 63, 64, 65, 128, 1000, 4097} {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(i%5 + 1) // small integers: every order gives the exact sum
				}
				want := float32(0)
				for _, v := range x {
					want += v
				}
				require.Equal(t, want, StreamRead(x), "n=%d", n)
				if n > 0 {
					x[n-1] += 1000 // the last element counts too
					require.Equal(t, want+1000, StreamRead(x), "n=%d", n)
				}
			}
		})
	}
}

// TestPeakLoopsFollowTheLevel: at the generic level no vector loop is offered, and a
// loop that is offered runs.
//
// Not parallel: kernels.Restrict sets the level of the whole process.
func TestPeakLoopsFollowTheLevel(t *testing.T) {
	prev, err := kernels.Restrict("generic")
	require.NoError(t, err)
	fma, mulAdd, _, _, _ := PeakLoops()
	int8, _, _ := Int8PeakLoop()
	require.Nil(t, fma)
	require.Nil(t, mulAdd)
	require.Nil(t, int8)
	_, err = kernels.Restrict(prev)
	require.NoError(t, err)
	fma, mulAdd, _, _, _ = PeakLoops()
	for _, loop := range []func(int){fma, mulAdd} {
		if loop != nil {
			loop(10)
		}
	}
}

// threadLoop runs f b.N times on one locked OS thread and reports the thread's CPU time
// per operation ("cpu-ns/op") and flops per CPU second, which a shared machine moves far
// less than the wall time.
func threadLoop(b *testing.B, flops float64, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f()
	b.ResetTimer()
	start := threadCPU()
	for i := 0; i < b.N; i++ {
		f()
	}
	cpu := threadCPU() - start
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	if flops > 0 && cpu > 0 {
		b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "cpu-GFLOP/s")
	}
}

// threadCPU returns the CPU time the calling OS thread has used.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPeak runs the arithmetic peak loops of PeakLoops and Int8PeakLoop on one thread:
// the ceilings of the matrix kernels ("muladd": the unfused multiply and add they use;
// "int8": the integer products of the quantized weights, in operations per second).
func BenchmarkPeak(b *testing.B) {
	if loop, ops, what := Int8PeakLoop(); loop != nil {
		b.Run("int8/"+strings.ReplaceAll(what, " ", "_"), func(b *testing.B) {
			const iters = 1 << 20
			threadLoop(b, float64(iters*ops), func() { loop(iters) })
		})
	}
	fma, mulAdd, fmaFlops, mulAddFlops, bits := PeakLoops()
	for _, l := range []struct {
		name  string
		loop  func(int)
		flops int
	}{{"fma", fma, fmaFlops}, {"muladd", mulAdd, mulAddFlops}} {
		if l.loop == nil {
			continue
		}
		b.Run(fmt.Sprintf("%s/%d-bit", l.name, bits), func(b *testing.B) {
			const iters = 1 << 20
			threadLoop(b, float64(iters*l.flops), func() { l.loop(iters) })
		})
	}
}
