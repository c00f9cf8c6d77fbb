package quant

// The q4_1, q5_0 and q5_1 weight types are ggml's block_q4_1, block_q5_0 and block_q5_1:
// the same blocks, byte for byte, as the cache types of those names (layouts in
// cache_block.go), quantized by the same ggml reference quantizers (encodeQ4_1 in
// cache_q4_1.go, encodeQ5_0 and encodeQ5_1 in cache_q5.go) and decoded by the same
// float32 arithmetic (their group decoders in cache_block.go). One implementation serves
// both uses; only the products differ: a weight row meets a Q8_0/Q8_1-quantized input
// (kernels.DotQ4_1Q8Rows, ...), a cache row a float32 query.

// dequantizeQ4_1 is ggml's dequantize_row_q4_1: y = c·d + m, the product rounded first.
func dequantizeQ4_1(dst []float32, src []byte) { decodeBlocks(Q4_1, dst, src) }

// dequantizeQ5_0 is ggml's dequantize_row_q5_0: y = (c−16)·d.
func dequantizeQ5_0(dst []float32, src []byte) { decodeBlocks(Q5_0, dst, src) }

// dequantizeQ5_1 is ggml's dequantize_row_q5_1: y = c·d + m, the product rounded first.
func dequantizeQ5_1(dst []float32, src []byte) { decodeBlocks(Q5_1, dst, src) }
