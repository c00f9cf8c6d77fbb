package tokenizer

// vocabCore is what every tokenizer keeps of its vocabulary by id: the stored strings,
// the GGUF token types, the special ids and the end-of-generation set. BPE and SPM embed
// it, so its accessors are theirs.
type vocabCore struct {
	// text is the token text by id: as the vocabulary stores it, "" for unused ids (BPE:
	// in the byte alphabet, "Ġworld" for " world"; SPM: empty tokens renamed as llama.cpp
	// does).
	text  []string
	types []int32      // GGUF token type by id
	eog   map[int]bool // end-of-generation ids

	bos, eos, unk, pad, eot int
}

// VocabSize returns the number of token ids.
func (v *vocabCore) VocabSize() int { return len(v.text) }

// BOS returns the beginning-of-sequence id, or -1 if there is none.
func (v *vocabCore) BOS() int { return v.bos }

// EOS returns the end-of-sequence id, or -1 if there is none.
func (v *vocabCore) EOS() int { return v.eos }

// UNK returns the unknown-token id, or -1 if there is none.
func (v *vocabCore) UNK() int { return v.unk }

// PAD returns the padding id, or -1 if there is none.
func (v *vocabCore) PAD() int { return v.pad }

// IsEOG reports whether id ends generation: EOS, EOT and the other end-of-generation ids
// the vocabulary declares.
func (v *vocabCore) IsEOG(id int) bool { return v.eog[id] }

// TokenText returns the raw vocabulary string of id (for a BPE vocabulary in the byte
// alphabet, "Ġworld" for " world"), or "" if id is out of range or unused.
func (v *vocabCore) TokenText(id int) string {
	if id < 0 || id >= len(v.text) {
		return ""
	}
	return v.text[id]
}

// TokenType returns the GGUF token type of id (TypeNormal, TypeControl, TypeUserDefined,
// ...), or TypeUndefined if id is out of range or unused. For tokenizer.json vocabularies
// special added tokens are TypeControl, other added tokens TypeUserDefined, and
// byte-fallback tokens TypeByte.
func (v *vocabCore) TokenType(id int) int32 {
	if id < 0 || id >= len(v.types) {
		return TypeUndefined
	}
	return v.types[id]
}
