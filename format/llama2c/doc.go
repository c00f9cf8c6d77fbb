// Package llama2c describes the legacy (version 0) checkpoint format of Andrej
// Karpathy's llama2.c, the format of run.c and of the TinyStories models
// (stories260K.bin, stories15M.bin, ...): the header, its validation and the
// layout of the tensors after it. It knows nothing of the transformer; the
// loader and writer of models in this format are in model/llama2c.
//
// A checkpoint is a 28-byte header of seven little-endian int32 values
//
//	dim | hidden_dim | n_layers | n_heads | n_kv_heads | vocab_size | seq_len
//
// followed by float32 tensors with no padding, in run.c's order (each layered
// tensor holds all layers one after another; matrices are row-major, one row
// per output):
//
//	token_embedding_table  vocab_size × dim
//	rms_att_weight         n_layers × dim
//	wq                     n_layers × (n_heads·head_size) × dim
//	wk, wv                 n_layers × (n_kv_heads·head_size) × dim
//	wo                     n_layers × dim × (n_heads·head_size)
//	rms_ffn_weight         n_layers × dim
//	w1 (gate)              n_layers × hidden_dim × dim
//	w2 (down)              n_layers × dim × hidden_dim
//	w3 (up)                n_layers × hidden_dim × dim
//	rms_final_weight       dim
//	freq_cis_real          seq_len × head_size/2 (unused: RoPE is computed)
//	freq_cis_imag          seq_len × head_size/2 (unused)
//	wcls                   vocab_size × dim, only when vocab_size < 0
//
// with head_size = dim / n_heads. A negative vocab_size means the classifier is
// stored separately at the end; a positive one that it is the embedding table.
// The file says nothing else, so the rest is run.c's fixed convention:
// RoPE rotating adjacent pairs over the whole head with base 10000, RMSNorm
// epsilon 1e-5, and a separate tokenizer.bin (read by the tokenizer package).
//
// ReadHeader treats the file as untrusted: the header is checked for
// non-positive, inconsistent and overflowing sizes, and the file must be
// exactly as long as the header says.
package llama2c
