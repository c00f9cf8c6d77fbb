//go:build !linux

package attention

import "time"

var started = time.Now()

// threadCPU is the wall time where the thread's CPU time is not read: the benchmarks'
// ratios then include whatever else the machine runs.
func threadCPU() time.Duration { return time.Since(started) }
