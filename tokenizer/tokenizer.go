// Package tokenizer turns text into token ids and back for the models kvref runs.
//
// The SentencePiece-style BPE tokenizer (SPM) reproduces llama.cpp's
// llm_tokenizer_spm byte for byte: the GGUF vocabularies with
// tokenizer.ggml.model = "llama" (Llama 1/2, Mistral, Phi-3, TinyStories, ...) and
// llama2.c's tokenizer.bin. The byte-level BPE (BPE) covers GGUF's "gpt2" vocabularies
// (GPT-2, Llama 3, Qwen2, SmolLM, ...) as llama.cpp does, and Hugging Face tokenizer.json
// files as the tokenizers library does.
//
// # Special tokens
//
// Control tokens (<s>, </s>, <|im_start|>, <|eot_id|>, ...; Hugging Face's added tokens
// with "special": true) are only produced from text when the caller asks:
//
//	tok.Encode(text, true)                         // "<|im_end|>" in text is ordinary text
//	tok.EncodeSpecial(text, tokenizer.Prompt)      // "<|im_end|>" in text becomes that token
//
// EncodeSpecial with ParseSpecial is what llama-server does with a text prompt
// (llama.cpp's parse_special=true) for GGUF vocabularies, and what Hugging Face's
// tokenizers do by default for tokenizer.json (each added token's lstrip, rstrip,
// single_word and normalized flags honoured). User-defined (non-special) added tokens are
// split out of the text either way, as both do. Decoding mirrors it:
//
//	tok.Decode(ids)                        // control tokens give nothing (skip_special_tokens=true)
//	tok.DecodeSpecial(ids, true)           // control tokens give their text (skip_special_tokens=false)
package tokenizer

// EncodeOptions say what EncodeSpecial adds to a text and which of its text it reads as
// special tokens.
type EncodeOptions struct {
	// AddSpecial adds the vocabulary's special prefix and suffix (BOS, and EOS when it
	// says add_eos).
	AddSpecial bool
	// ParseSpecial makes the text of a special token in the input ("<s>",
	// "<|im_end|>", ...) produce that token (llama.cpp's parse_special).
	ParseSpecial bool
}

// Prompt is how kvref, like llama-server, tokenizes a text prompt: BOS added when the
// vocabulary wants it, special tokens written in the text parsed.
var Prompt = EncodeOptions{AddSpecial: true, ParseSpecial: true}

// Tokenizer is implemented by every tokenizer kvref has: SPM and BPE.
type Tokenizer interface {
	// Encode tokenizes text. addSpecial prepends BOS when the vocabulary says
	// add_bos (and appends EOS when it says add_eos). Special-token text in the
	// input is not parsed as special tokens (llama.cpp's parse_special=false,
	// Hugging Face's split_special_tokens=True). Encode(text, a) is
	// EncodeSpecial(text, EncodeOptions{AddSpecial: a}).
	Encode(text string, addSpecial bool) []int
	// EncodeSpecial tokenizes text as opt says: AddSpecial is Encode's
	// addSpecial; ParseSpecial makes the text of a control token in the input
	// ("<s>", "<|im_start|>", ...) produce that token, as llama-server does for
	// text prompts and Hugging Face's encode does by default.
	EncodeSpecial(text string, opt EncodeOptions) []int
	// Decode returns the full text of ids: control tokens produce nothing,
	// byte tokens are reassembled into their bytes, and the leading space that
	// the SentencePiece normalizer added is stripped. Decode(ids) is
	// DecodeSpecial(ids, false).
	Decode(ids []int) string
	// DecodeSpecial is Decode, with control tokens rendered as their text when
	// keepSpecial is set (Hugging Face's skip_special_tokens=false, llama.cpp's
	// detokenize with unparse_special).
	DecodeSpecial(ids []int, keepSpecial bool) string
	// Piece returns the bytes token id contributes in the middle of a stream
	// ("▁" -> ' ', <0x41> -> 'A', control tokens -> nil). It never strips.
	Piece(id int) []byte
	// TokenText returns the raw vocabulary string of id (for display).
	TokenText(id int) string
	// VocabSize returns the number of tokens in the vocabulary.
	VocabSize() int
	// BOS returns the beginning-of-sequence id, or -1 if there is none.
	BOS() int
	// EOS returns the end-of-sequence id, or -1 if there is none.
	EOS() int
	// AddBOS reports whether Encode with addSpecial prepends BOS.
	AddBOS() bool
	// IsEOG reports whether id ends generation: EOS and any end-of-turn or
	// end-of-message ids the vocabulary declares.
	IsEOG(id int) bool
}
