package tokenizer

import "strings"

// spaceSymbol is U+2581 LOWER ONE EIGHTH BLOCK, which SentencePiece uses for a space.
const spaceSymbol = "\u2581"

// Encode tokenizes text as llama.cpp's llama_tokenize(text, addSpecial,
// parse_special=false) does: special-token text in the input stays text
// (user-defined tokens are still split out, as in llama.cpp).
func (s *SPM) Encode(text string, addSpecial bool) []int {
	return s.EncodeSpecial(text, EncodeOptions{AddSpecial: addSpecial})
}

// EncodeSpecial tokenizes text as llama.cpp's llama_tokenize(text,
// add_special, parse_special) does. opt.AddSpecial adds BOS (and EOS) as the
// vocabulary asks; opt.ParseSpecial makes the text of control and unknown
// tokens such as "<s>", "<unk>" or "<|end|>" in the input produce those
// tokens, longest first, each swallowing the whitespace beside it that its
// LSTRIP / RSTRIP attribute names.
func (s *SPM) EncodeSpecial(text string, opt EncodeOptions) []int {
	addSpecial, parseSpecial := opt.AddSpecial, opt.ParseSpecial
	out := make([]int, 0, len(text)/3+2)
	if addSpecial && s.addBOS {
		out = append(out, s.bos)
	}
	// A space is prefixed to the first raw-text fragment and to every
	// raw-text fragment that follows a special token.
	prevSpecial := true
	for _, f := range llamaPartition(text, s.byLength, parseSpecial) {
		if f.id >= 0 {
			out = append(out, f.id)
			prevSpecial = true
			continue
		}
		t := f.text
		if s.addSpacePrefix && prevSpecial {
			t = " " + t
		}
		out = s.tokenize(strings.ReplaceAll(t, " ", spaceSymbol), out)
		prevSpecial = false
	}
	if addSpecial && s.addEOS {
		out = append(out, s.eos)
	}
	return out
}
