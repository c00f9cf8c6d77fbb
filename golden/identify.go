package golden

import (
	"os"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/loader"
)

// Identify names the model a golden is recorded with, or checked against: ref as it was
// opened (a file, a directory, an hf:// reference, synth:SHAPE or "" for the built-in
// model), the SHA-256 of its GGUF bytes, its vocabulary and special tokens, and the
// context (ctx ≤ 0: the model's, at most engine.DefaultContext). A model that is not one
// file (the built-in, a synthetic one, a directory) is identified by the GGUF bytes kvref
// holds for it, and its path is kvref's description of where it came from.
func Identify(ref string, m *model.Model, ctx int) (ModelInfo, error) {
	if ctx <= 0 {
		ctx = min(m.Config.Context, engine.DefaultContext)
	}
	info := ModelInfo{Path: ref, Source: m.Source, Vocab: m.Config.Vocab, Context: ctx, BOS: m.Tokenizer.BOS(), EOS: m.Tokenizer.EOS(),
		SlidingWindow: m.Config.SlidingWindow}
	if loader.KindOf(ref) != loader.File {
		b, err := loader.InMemoryGGUF(ref)
		if err != nil {
			return info, err
		}
		info.Path, info.SHA256 = m.Source, BytesSHA256(b)
		return info, nil
	}
	file := ref
	if _, err := os.Stat(m.Source); err == nil {
		file = m.Source
	}
	sum, err := FileSHA256(file)
	if err != nil {
		return info, err
	}
	info.SHA256 = sum
	return info, nil
}
