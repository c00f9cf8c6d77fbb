package tokenizer

import (
	"slices"
)

// Vocab returns the vocabulary the tokenizer was built from (a copy), for writers such as
// WriteLlama2c.
func (s *SPM) Vocab() Vocab {
	v := Vocab{
		Tokens: slices.Clone(s.text), Scores: slices.Clone(s.scores), Types: slices.Clone(s.types),
		BOS: s.bos, EOS: s.eos, UNK: s.unk, PAD: s.pad, EOT: s.eot,
		AddBOS: s.addBOS, AddEOS: s.addEOS, AddSpacePrefix: s.addSpacePrefix,
		LStrip: slices.Clone(s.lstrip), RStrip: slices.Clone(s.rstrip),
	}
	for id := range s.eog {
		if id != s.eos && id != s.eot {
			v.EOG = append(v.EOG, id)
		}
	}
	slices.Sort(v.EOG)
	return v
}
