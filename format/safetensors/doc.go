// Package safetensors reads and writes Hugging Face's safetensors files, the
// format of most checkpoints on the Hugging Face Hub, including sharded
// checkpoints described by a model.safetensors.index.json.
//
// A safetensors file is laid out as:
//
//	N            uint64, little-endian: the length of the header
//	header       N bytes of UTF-8 JSON, padded with spaces:
//	             {"__metadata__": {"key": "value", ...},
//	              "tensor name": {"dtype": "F32", "shape": [rows, cols],
//	                              "data_offsets": [begin, end]}, ...}
//	data buffer  the rest of the file; tensor bytes at [begin, end) of it
//
// Shapes are outermost first and the data is row-major and little-endian, so a
// [rows, cols] matrix is rows rows of cols elements. The reader treats its
// input as untrusted and applies the rules of the reference implementation
// (huggingface/safetensors; its sub-byte F4/F6 dtypes are not supported):
// a header of at most 100,000,000 bytes that
// starts with '{' and is valid UTF-8 JSON with no duplicate names, known dtypes,
// byte ranges whose length is the shape's element count times the dtype size
// (overflow-checked), and ranges that tile the data buffer exactly: no
// overlaps, no gaps, nothing after the last tensor. Errors name the file and
// the tensor and say what was expected and what was found. Parse never panics.
//
// Open maps the file into memory read-only, so TensorData returns slices of
// the mapping without copying. Write produces the bytes the reference
// implementation produces for the same tensors.
package safetensors
