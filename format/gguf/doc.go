// Package gguf reads and writes GGUF model files, the single-file format used
// by ggml and llama.cpp.
//
// A GGUF file (versions 2 and 3, little-endian) is laid out as:
//
//	magic "GGUF" | version u32 | tensor count u64 | metadata count u64
//	metadata:     key string | value type u32 | value
//	tensor infos: name string | n_dims u32 | dims u64[n_dims] | type u32 | offset u64
//	zero padding to the alignment (general.alignment, default 32)
//	tensor data:  each tensor at data start + offset, offsets aligned
//
// Strings are a u64 byte length followed by the bytes (no terminator). Arrays
// are an element type u32, an element count u64 and the elements; arrays may
// nest.
//
// The reader treats its input as untrusted: every count and length is checked
// against the bytes that remain before anything is allocated, every tensor is
// checked to lie inside the file, and errors name the file, the key or tensor,
// and what was expected and found. Parse never panics.
//
// Open maps the file into memory read-only, so TensorData returns slices of
// the mapping without copying; metadata values are copied out and stay valid
// after Close.
package gguf
