package kernels

// kBatchGeneric is the definition of the batched kernels: the row dots of each vector (a
// panel of rows at a time, which changes no bit).
func kBatchGeneric(f *kFormat, out []float32, stride int, x *Q8KBatch, w []byte, rows, rb int) {
	kRowsPanels(f, out, stride, x, w, rows, rb, 0)
}
