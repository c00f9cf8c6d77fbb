// Package llama2c loads and writes models in the legacy (version 0) checkpoint format of
// Andrej Karpathy's llama2.c (the format itself, its header and tensor layout, is described
// and validated by format/llama2c). The file says nothing beyond the shapes, so the rest is
// run.c's fixed convention: RoPE rotating adjacent pairs over the whole head with base 10000,
// RMSNorm epsilon 1e-5, and a separate tokenizer.bin (read by the tokenizer package). Load
// maps the file into memory and the weight matrices alias the mapping; nothing is copied but
// the norm vectors.
package llama2c
