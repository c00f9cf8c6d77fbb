package quant

// Exports for the external tests of this package (llama_quantize_test.go).

// GoldenCorpus is goldenCorpus: twelve 4096-value rows of different distributions.
var GoldenCorpus = goldenCorpus

// GoldenRowName is the name of corpus row k ("bell", ..., "huge").
func GoldenRowName(k int) string { return goldenRowKinds[k].name }

// EncodeIQ4NLWeights is ggml's iq4_nl weight quantizer, quantize_iq4_nl without an
// importance matrix: encodeIQ4NL with ntry = 7.
func EncodeIQ4NLWeights(dst []byte, src []float32) { encodeIQ4NL(dst, src, iq4nlWeightTries) }
