package tokenizer

import (
	"slices"
	"strings"
)

// Encode tokenizes text without parsing special tokens in it: the text of a
// control token such as "<|endoftext|>" is tokenized as ordinary text
// (llama.cpp's parse_special=false; Hugging Face's split_special_tokens).
// User-defined added tokens are still split out. addSpecial adds the
// vocabulary's BOS/EOS (the tokenizer.json post-processor's tokens).
// Invalid UTF-8 bytes are read as U+FFFD, one per byte.
func (t *BPE) Encode(text string, addSpecial bool) []int {
	return t.EncodeSpecial(text, EncodeOptions{AddSpecial: addSpecial})
}

// EncodeSpecial tokenizes text. opt.AddSpecial adds the vocabulary's special
// prefix and suffix (BOS/EOS); opt.ParseSpecial makes the text of special
// tokens in the input produce those tokens, as Hugging Face's encode does
// by default.
func (t *BPE) EncodeSpecial(text string, opt EncodeOptions) []int {
	addSpecial, parseSpecial := opt.AddSpecial, opt.ParseSpecial
	text = validUTF8(text)
	out := make([]int, 0, len(text)/3+len(t.prefix)+len(t.suffix))
	if addSpecial {
		out = append(out, t.prefix...)
	}
	var sc mergeScratch
	if t.hf {
		out = t.encodeHF(text, parseSpecial, &sc, out)
	} else {
		for _, f := range llamaPartition(text, t.byLength, parseSpecial) {
			if f.id >= 0 {
				out = append(out, f.id)
				continue
			}
			out = t.encodeWords(f.text, f.first, &sc, out)
		}
	}
	if addSpecial {
		out = append(out, t.suffix...)
	}
	return out
}

// encodeHF is the Hugging Face pipeline: split out the added tokens that
// match the raw text, normalize what is left, split out the added tokens
// that match the normalized text, then pre-tokenize and run the model.
func (t *BPE) encodeHF(text string, parseSpecial bool, sc *mergeScratch, out []int) []int {
	var inner []textFrag
	for _, f := range hfPartition(text, t.rawTrie, parseSpecial, true, nil) {
		if f.id >= 0 {
			out = append(out, f.id)
			continue
		}
		s := f.text
		if t.norm != nil {
			s = t.norm.normalize(s)
		}
		inner = hfPartition(s, t.normTrie, parseSpecial, f.first, inner[:0])
		for _, g := range inner {
			if g.id >= 0 {
				out = append(out, g.id)
				continue
			}
			out = t.encodeWords(g.text, g.first, sc, out)
		}
	}
	return out
}

// encodeWords pre-tokenizes one stretch of (normalized) text and appends
// the tokens of its words.
func (t *BPE) encodeWords(s string, first bool, sc *mergeScratch, out []int) []int {
	if s == "" {
		return out
	}
	words := []splitPiece{{text: s, first: first}}
	if t.pre != nil {
		words = t.pre.preTokenize(words)
	}
	for _, w := range words {
		out = t.model.tokenizeWord(w.text, sc, out)
	}
	return out
}

// Piece returns the bytes token id contributes in the middle of a stream:
// its text mapped back from the byte alphabet (or with "▁" as a space and
// <0xNN> as its byte, for SentencePiece-style tokenizer.json vocabularies);
// a user-defined token's text; nil for special tokens and ids out of range.
// The bytes may be part of a UTF-8 sequence. The caller owns the slice.
func (t *BPE) Piece(id int) []byte {
	if id < 0 || id >= len(t.pieces) {
		return nil
	}
	return slices.Clone(t.pieces[id])
}

// Decode returns the text of ids, skipping special tokens.
//
// For a GGUF vocabulary it is llama.cpp's detokenize: the pieces
// concatenated, byte for byte, so a sequence that ends inside a UTF-8
// character keeps its partial bytes (llama.cpp's clean_up_tokenization_spaces
// pass, which some pre-tokenizers enable, is not applied: Decode gives back
// exactly what Encode read). For a tokenizer.json vocabulary it is Hugging
// Face's decode(ids, skip_special_tokens=true): the decoder chain, which
// replaces invalid UTF-8 with U+FFFD as Rust's from_utf8_lossy does.
func (t *BPE) Decode(ids []int) string {
	return t.DecodeSpecial(ids, false)
}

// DecodeSpecial is Decode with control tokens rendered as their text when
// keepSpecial is set (llama.cpp's unparse_special, Hugging Face's
// skip_special_tokens=false).
func (t *BPE) DecodeSpecial(ids []int, keepSpecial bool) string {
	if !t.hf {
		var b strings.Builder
		for _, id := range ids {
			if id < 0 || id >= len(t.pieces) {
				continue
			}
			if keepSpecial && (t.types[id] == TypeControl || t.types[id] == TypeUnknown) {
				b.WriteString(t.text[id])
				continue
			}
			b.Write(t.pieces[id])
		}
		return b.String()
	}
	toks := make([]string, 0, len(ids))
	for _, id := range ids {
		if id < 0 || id >= len(t.decText) || t.types[id] == TypeUndefined {
			continue
		}
		if !keepSpecial && t.specialText[t.decText[id]] {
			continue
		}
		toks = append(toks, t.decText[id])
	}
	if t.dec == nil {
		return strings.Join(toks, " ")
	}
	return strings.Join(t.dec.decodeChain(toks), "")
}
