package kernels

// Prefetch asks the CPU to start loading the memory of b into its caches, so that a later
// read of b does not wait for main memory: attention reads a few hundred bytes from each
// of many cache rows scattered through the pool, and without it every row is a separate
// wait of about 100 ns. It is a hint: it changes no value, and on a build without assembly
// (purego, or another architecture) it does nothing.
func Prefetch(b []byte) {
	if len(b) > 0 {
		prefetch(b)
	}
}

// PrefetchL2 is Prefetch into the core's L2 cache only (PREFETCHT1): for data read a little
// later in bulk, such as the next panel of weight rows a batched product decodes, where
// PREFETCHT0's few L1 miss buffers would drop most of the requests.
func PrefetchL2(b []byte) {
	if len(b) > 0 {
		prefetchL2(b)
	}
}
