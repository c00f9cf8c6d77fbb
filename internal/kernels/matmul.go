package kernels

// MatMulRows computes, for rows r in [start, end) of the row-major matrix w (rows × cols) and
// for every one of the batch input vectors x[b*cols:(b+1)*cols], the output
// out[b*rows+r] = Dot(x_b, w_r). Each weight row is read once for each block of inputs
// (the whole batch, unless it is too large to stay in the caches: see
// InputBlocks) and used for the whole block while it is in cache; every output keeps Dot's exact order, so a row's result does not
// depend on which other rows share the batch.
//
// It panics, like the plain loop over Dot would, when an index is out of range. out should
// not overlap w or x; if it does, the result is that of the plain loop (rows in increasing
// order, and for each row the batch in increasing order), which is what the portable path
// computes.
func MatMulRows(out, w, x []float32, rows, cols, batch, start, end int) {
	matMulRows(out, w, x, rows, cols, batch, start, end)
}

// DecodedPanelRows is how many rows MatMulRowsDecoded's fast path decodes at a time (a panel
// that stays in L2 while every input meets it), in order: a decode callback may prefetch
// the row this many rows on, which the next panel decodes, so that its reads from memory
// overlap this panel's arithmetic instead of waiting for it.
const DecodedPanelRows = 32

// InputBlocks is how many blocks of input vectors (of cols floats) the fast
// MatMulRowsDecoded splits a batch into: every row meets one block's inputs before the next
// block starts, so each row is decoded once per block. It is 1 unless the batch is too
// large to stay in the caches while the rows stream past it. MatMulRows splits a batch of
// float32 rows the same way, in blocks sized for whichever kernel the product runs.
func InputBlocks(cols, batch int) int { return inputBlocks(cols, batch) }

// MatMulRowsDecoded is MatMulRows for a matrix kept in another form: decode(dst, r) writes
// row r (cols values) as float32, the exact values its products multiply (an F16 or BF16
// row widened, a quantized row dequantized). The results are MatMulRows's on the decoded
// matrix, bit for bit. The fast path decodes each row once per block of inputs (InputBlocks:
// once per call for a batch that fits the caches), a block of rows at a time that stays in
// the core's caches while every input vector of the block meets it.
//
// It panics when out or x is too short, like MatMulRows; decode must not write anywhere
// but dst.
func MatMulRowsDecoded(out, x []float32, rows, cols, batch, start, end int, decode func(dst []float32, r int)) {
	matMulRowsDecoded(out, x, rows, cols, batch, start, end, decode)
}
