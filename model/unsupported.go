package model

import (
	"fmt"
	"strings"
)

// Architectures kvref recognises but does not compute, with what it would need, so that
// such a model is refused with the reason instead of as an unknown name.
var unrunnable = map[string]string{
	"gpt-oss":    "its feed-forward is a mixture of experts with MXFP4-quantized expert weights, and its attention adds learned sinks",
	"gemma3n":    "Gemma 3n adds per-layer embeddings, AltUp and LAuReL blocks and shares keys and values across layers",
	"gemma":      "the first Gemma is not implemented (kvref computes gemma2 and gemma3)",
	"gemma4":     "Gemma 4 has per-layer-type head widths and shares keys and values across layers",
	"gemma-embd": "EmbeddingGemma attends bidirectionally and pools an embedding; kvref decodes causal language models",
	"qwen2moe":   "its feed-forward is a mixture of experts",
	"qwen3moe":   "its feed-forward is a mixture of experts",
	"llama4":     "its feed-forward is a mixture of experts and some layers attend in chunks without RoPE",
	"deepseek2":  "it uses multi-head latent attention and a mixture of experts",
	"mixtral":    "its feed-forward is a mixture of experts",
}

// Architectures lists the architectures kvref computes, as GGUF names them.
var Architectures = []string{"llama", "qwen2", "qwen3", "gemma2", "gemma3"}

// UnsupportedArchitecture is the error for a model of architecture arch (GGUF's name for
// it) that kvref does not compute; what names the model's file and key.
func UnsupportedArchitecture(what, arch string) error {
	if why, ok := unrunnable[arch]; ok {
		return fmt.Errorf("%s: kvref cannot run %s models: %s (kvref runs %s)", what, arch, why, strings.Join(Architectures, ", "))
	}
	return fmt.Errorf("%s: unsupported architecture %q (kvref supports: %s)", what, arch, strings.Join(Architectures, ", "))
}
