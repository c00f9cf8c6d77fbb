package tokenizer

import (
	"slices"
	"strings"
)

// Piece returns the bytes token id contributes in the middle of a stream, as
// llama.cpp's token_to_piece with special=false: a normal token's text with
// "▁" turned into ' ', a byte token's byte, a user-defined token's text, and
// nil for control, unknown and unused tokens and for ids out of range.
// It never strips a leading space. The caller owns the returned slice.
func (s *SPM) Piece(id int) []byte {
	return slices.Clone(s.rawPiece(id))
}

// rawPiece returns the precomputed Piece(id) without copying it.
func (s *SPM) rawPiece(id int) []byte {
	if id < 0 || id >= len(s.pieces) {
		return nil
	}
	return s.pieces[id]
}

// piece computes Piece(id).
func (s *SPM) piece(id int) []byte {
	t := s.text[id]
	switch s.types[id] {
	case TypeNormal:
		return []byte(strings.ReplaceAll(t, spaceSymbol, " "))
	case TypeUserDefined:
		return []byte(t)
	case TypeByte:
		b, _ := parseByteToken(t)
		return []byte{b}
	}
	return nil
}

// Decode returns the text of ids: the pieces concatenated, so byte tokens
// reassemble into UTF-8; control and unknown tokens give nothing. When the
// vocabulary adds a space prefix, one leading space is stripped from the
// first token, or from the token right after a leading BOS. (llama.cpp
// strips only from the very first token, so for ids that start with BOS its
// detokenize keeps that space; Decode strips it, so that
// Decode(Encode(text, true)) gives text back.)
func (s *SPM) Decode(ids []int) string {
	return s.DecodeSpecial(ids, false)
}

// DecodeSpecial is Decode with control and unknown tokens rendered as their
// text when keepSpecial is set, as llama.cpp's detokenize(remove_special=false,
// unparse_special=true) does and Hugging Face's Llama 2 decoder with
// skip_special_tokens=false: a leading BOS then renders as "<s>" and the space
// prefix of the token after it stays ("<s> Hello").
func (s *SPM) DecodeSpecial(ids []int, keepSpecial bool) string {
	var b strings.Builder
	strip := s.addSpacePrefix
	for i, id := range ids {
		p := s.rawPiece(id)
		if keepSpecial && id >= 0 && id < len(s.types) && (s.types[id] == TypeControl || s.types[id] == TypeUnknown) {
			p = []byte(s.text[id])
		} else if i == 0 && id >= 0 && id == s.bos {
			continue // keep strip for the token after BOS
		}
		if strip && len(p) > 0 && p[0] == ' ' {
			p = p[1:]
		}
		strip = false
		b.Write(p)
	}
	return b.String()
}
