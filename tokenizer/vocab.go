package tokenizer

import (
	"errors"
	"fmt"
	"strconv"
)

// Token types, as stored in GGUF tokenizer.ggml.token_type.
const (
	TypeUndefined   int32 = 0 // no type given
	TypeNormal      int32 = 1 // an ordinary piece; "▁" stands for a space
	TypeUnknown     int32 = 2 // the unknown token, e.g. <unk>
	TypeControl     int32 = 3 // control tokens such as <s> and </s>; they render as nothing
	TypeUserDefined int32 = 4 // user-defined tokens, always split out of the text first
	TypeUnused      int32 = 5 // reserved, never produced
	TypeByte        int32 = 6 // byte-fallback tokens <0x00> .. <0xFF>
)

// Vocab is a SentencePiece vocabulary, as stored in GGUF metadata.
//
// Special ids are -1 when absent. Tokens, Scores and Types must have the
// same length. The optional fields EOG, LStrip and RStrip may be left nil.
type Vocab struct {
	Tokens []string  // token text, indexed by id
	Scores []float32 // merge priority: higher merges first
	Types  []int32   // GGUF token types: 1 normal, 2 unknown, 3 control, 4 user defined, 5 unused, 6 byte

	BOS, EOS, UNK, PAD int // -1 when absent
	EOT                int // end of turn, -1 when absent

	// EOG lists further end-of-generation ids besides EOS and EOT
	// (end-of-message, FIM padding, ...).
	EOG []int

	AddBOS, AddEOS bool // Encode with addSpecial adds BOS / EOS
	AddSpacePrefix bool // prepend a space to the text (and strip it again in Decode)

	// LStrip and RStrip, when non-nil, mark special or user-defined tokens
	// that swallow the whitespace to their left / right when they are split
	// out of the text (llama.cpp's LSTRIP / RSTRIP token attributes).
	LStrip, RStrip []bool
}

// validate checks v and returns the first problem found.
func (v *Vocab) validate() error {
	n := len(v.Tokens)
	if n == 0 {
		return errors.New("tokenizer: vocabulary has no tokens")
	}
	if len(v.Scores) != n {
		return fmt.Errorf("tokenizer: vocabulary has %d tokens but %d scores", n, len(v.Scores))
	}
	if len(v.Types) != n {
		return fmt.Errorf("tokenizer: vocabulary has %d tokens but %d token types", n, len(v.Types))
	}
	if v.LStrip != nil && len(v.LStrip) != n {
		return fmt.Errorf("tokenizer: vocabulary has %d tokens but %d LStrip flags", n, len(v.LStrip))
	}
	if v.RStrip != nil && len(v.RStrip) != n {
		return fmt.Errorf("tokenizer: vocabulary has %d tokens but %d RStrip flags", n, len(v.RStrip))
	}
	for _, s := range []struct {
		name string
		id   int
	}{{"BOS", v.BOS}, {"EOS", v.EOS}, {"UNK", v.UNK}, {"PAD", v.PAD}, {"EOT", v.EOT}} {
		if s.id < -1 || s.id >= n {
			return fmt.Errorf("tokenizer: %s id %d out of range [0, %d) (use -1 for none)", s.name, s.id, n)
		}
	}
	for _, id := range v.EOG {
		if id < 0 || id >= n {
			return fmt.Errorf("tokenizer: EOG id %d out of range [0, %d)", id, n)
		}
	}
	if v.AddBOS && v.BOS < 0 {
		return errors.New("tokenizer: AddBOS is set but the vocabulary has no BOS token")
	}
	if v.AddEOS && v.EOS < 0 {
		return errors.New("tokenizer: AddEOS is set but the vocabulary has no EOS token")
	}
	for id, t := range v.Types {
		if t < TypeUndefined || t > TypeByte {
			return fmt.Errorf("tokenizer: token %d (%q) has unknown type %d (want 0..6)", id, v.Tokens[id], t)
		}
		if t == TypeByte {
			if _, ok := parseByteToken(v.Tokens[id]); !ok {
				return fmt.Errorf("tokenizer: byte token %d is %q, want the form <0xNN>", id, v.Tokens[id])
			}
		}
	}
	return nil
}

// parseByteToken parses a byte-fallback token text "<0xNN>".
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	b, err := strconv.ParseUint(s[3:5], 16, 8)
	if err != nil {
		return 0, false
	}
	return byte(b), true
}

// byteTokenText returns the vocabulary text of the byte-fallback token for b.
func byteTokenText(b byte) string {
	const hex = "0123456789ABCDEF"
	return string([]byte{'<', '0', 'x', hex[b>>4], hex[b&15], '>'})
}
