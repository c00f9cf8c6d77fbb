//go:build !amd64 || purego

package kernels

func kBatchFast() bool { return false }

func kBatchOcts() bool { return false }

func dotKBatchFast(f *kFormat, out []float32, stride int, x *Q8KBatch, w []byte, rows, rb int) bool {
	return false
}
