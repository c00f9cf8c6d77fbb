package kernels

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadCPU returns the CPU time the calling OS thread has used.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuLoop runs f b.N times on one locked OS thread and reports, beside the wall time, the
// thread's CPU time per operation ("cpu-ns/op") and flops per CPU second: on a machine
// shared with other work, a single-threaded kernel's CPU time moves far less than its
// wall time.
func cpuLoop(b *testing.B, flops float64, f func()) {
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
	if flops > 0 {
		b.ReportMetric(flops*float64(b.N)/cpu.Seconds()/1e9, "cpu-GFLOP/s")
	}
}
