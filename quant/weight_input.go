package quant

import (
	"fmt"
	"strings"

	"github.com/kvref/kvref/internal/kernels"
)

// InputKinds is a set of the quantized forms an input vector takes for the weight types'
// products: a matrix product quantizes its input once, in every form its matrices need.
type InputKinds uint8

// The input forms.
const (
	// InputQ8 is ggml's Q8_0 (blocks of 32 int8 values and an fp16 scale) with Q8_1's block
	// sums: the input of q8_0, q4_0, q4_1, q5_0 and q5_1 rows (kernels.Q8Input).
	InputQ8 InputKinds = 1 << iota
	// InputQ8K is ggml's Q8_K (super-blocks of 256 int8 values, a float32 scale and sums
	// of 16): the input of the k types (kernels.Q8KInput).
	InputQ8K
)

// String lists the forms: "q8", "q8_k", "q8+q8_k" or "none".
func (k InputKinds) String() string {
	var names []string
	if k&InputQ8 != 0 {
		names = append(names, "q8")
	}
	if k&InputQ8K != 0 {
		names = append(names, "q8_k")
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "+")
}

// Input returns the form of input t's products take.
func (t WeightType) Input() InputKinds {
	if t.format().dotQ8K != nil {
		return InputQ8K
	}
	return InputQ8
}

// Input is a float32 vector quantized for the weight types' products (see WeightType):
// to Q8_0 blocks with Q8_1's sums, to Q8_K super-blocks, or both. The zero value is an
// empty input; an Input is reused across vectors of any length.
type Input struct {
	n     int
	kinds InputKinds
	q8    kernels.Q8Input
	q8k   kernels.Q8KInput
}

// Quantize sets in to x in the given forms (ggml's quantize_row_q8_0, quantize_row_q8_1,
// quantize_row_q8_K). It panics if len(x) is not a multiple of every requested form's
// block (32 for InputQ8, 256 for InputQ8K).
func (in *Input) Quantize(x []float32, kinds InputKinds) {
	if kinds&InputQ8 != 0 && len(x)%kernels.QBlockLen != 0 || kinds&InputQ8K != 0 && len(x)%kernels.KBlockLen != 0 {
		panic(fmt.Sprintf("quant: Input.Quantize: a vector of %d values cannot be quantized as %v (blocks of 32, super-blocks of 256)", len(x), kinds))
	}
	in.n, in.kinds = len(x), kinds
	if kinds&InputQ8 != 0 {
		in.q8.Quantize(x)
	}
	if kinds&InputQ8K != 0 {
		in.q8k.Quantize(x)
	}
}

// Len is the length of the quantized vector.
func (in *Input) Len() int { return in.n }

// has reports whether in holds every form in k.
func (in *Input) has(k InputKinds) bool { return in.kinds&k == k }

// BatchInput is a batch of quantized input vectors for the batched products
// (DotRowsBatch): the forms asked for, Q8_0 and Q8_K, each laid out so that the kernels
// multiply a row by many vectors at once. The Inputs it was set from must not change while
// it is used. A BatchInput is reused across batches: Set refills it.
type BatchInput struct {
	n, count int
	kinds    InputKinds // the forms laid out
	q8s      []*kernels.Q8Input
	q8ks     []*kernels.Q8KInput
	q8       kernels.Q8Batch
	q8k      kernels.Q8KBatch
}

// Set makes b the batch of ins in the forms kinds (the batched products' inputs, of the
// types that have them: WeightType.Batched), laying out only those. It panics on vectors of
// different lengths or not quantized to every form in kinds.
func (b *BatchInput) Set(ins []Input, kinds InputKinds) {
	b.n, b.count, b.kinds = 0, len(ins), kinds
	b.q8s, b.q8ks = b.q8s[:0], b.q8ks[:0]
	for i := range ins {
		if ins[i].n != ins[0].n {
			panic(fmt.Sprintf("quant: BatchInput.Set: input %d has %d values, input 0 %d", i, ins[i].n, ins[0].n))
		}
		if !ins[i].has(kinds) {
			panic(fmt.Sprintf("quant: BatchInput.Set: input %d holds %v, the batch needs %v", i, ins[i].kinds, kinds))
		}
		b.q8s = append(b.q8s, &ins[i].q8)
		b.q8ks = append(b.q8ks, &ins[i].q8k)
	}
	if len(ins) > 0 {
		b.n = ins[0].n
	}
	if kinds&InputQ8 != 0 {
		b.q8.Set(b.q8s)
	}
	if kinds&InputQ8K != 0 {
		b.q8k.Set(b.q8ks)
	}
}

// onQ8 adapts a batched kernel of a type whose input is Q8_0 to DotRowsBatch.
func onQ8(k func(out []float32, stride int, x *kernels.Q8Batch, w []byte, rows int)) func([]float32, int, *BatchInput, []byte, int) {
	return func(out []float32, stride int, b *BatchInput, rows []byte, n int) { k(out, stride, &b.q8, rows, n) }
}

// onQ8K adapts a batched kernel of a k type (Q8_K input) to DotRowsBatch.
func onQ8K(k func(out []float32, stride int, x *kernels.Q8KBatch, w []byte, rows int)) func([]float32, int, *BatchInput, []byte, int) {
	return func(out []float32, stride int, b *BatchInput, rows []byte, n int) { k(out, stride, &b.q8k, rows, n) }
}

// Count is the number of vectors.
func (b *BatchInput) Count() int { return b.count }

// Batched reports whether t's products have a batched form (q8_0 and the k types), which
// DotRowsBatch uses.
func (t WeightType) Batched() bool { return t.format().dotBatch != nil }

// DotRowsBatch sets out[v·stride + r] = DotRowsInput of input vector v of b with row r of
// the n stored rows in rows, for every v < b.Count() and r < n, bit for bit; for the k
// types it multiplies each row by many vectors at once. It panics on wrong lengths, an
// invalid type, or a type without a batched form.
func (t WeightType) DotRowsBatch(out []float32, stride int, b *BatchInput, rows []byte, n int) {
	f := t.format()
	if f.dotBatch == nil {
		panic(fmt.Sprintf("quant: DotRowsBatch: %s has no batched product", t))
	}
	rb, err := t.RowBytes(b.n)
	if err != nil {
		panic(fmt.Sprintf("quant: DotRowsBatch: %v", err))
	}
	if rb > 0 && n > len(rows)/rb {
		panic(fmt.Sprintf("quant: DotRowsBatch: %d %s rows of %d values need %d bytes, got %d", n, t, b.n, n*rb, len(rows)))
	}
	if b.kinds&t.Input() == 0 {
		panic(fmt.Sprintf("quant: DotRowsBatch: %s rows need the %v input form, the batch holds %v", t, t.Input(), b.kinds))
	}
	f.dotBatch(out, stride, b, rows[:n*rb], n)
}
