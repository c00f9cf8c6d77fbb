package tokenizer

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/kvref/kvref/format/gguf"
)

// GGUF metadata keys read by FromGGUF.
const (
	keyModel          = "tokenizer.ggml.model"
	keyTokens         = "tokenizer.ggml.tokens"
	keyScores         = "tokenizer.ggml.scores"
	keyTypes          = "tokenizer.ggml.token_type"
	keyBOS            = "tokenizer.ggml.bos_token_id"
	keyEOS            = "tokenizer.ggml.eos_token_id"
	keyUNK            = "tokenizer.ggml.unknown_token_id"
	keyPAD            = "tokenizer.ggml.padding_token_id"
	keyEOT            = "tokenizer.ggml.eot_token_id"
	keyEOM            = "tokenizer.ggml.eom_token_id"
	keyFIMPad         = "tokenizer.ggml.fim_pad_token_id"
	keyFIMRep         = "tokenizer.ggml.fim_rep_token_id"
	keyFIMSep         = "tokenizer.ggml.fim_sep_token_id"
	keyAddBOS         = "tokenizer.ggml.add_bos_token"
	keyAddEOS         = "tokenizer.ggml.add_eos_token"
	keyAddSpacePrefix = "tokenizer.ggml.add_space_prefix"
	keyName           = "general.name"
)

// FromGGUF builds the tokenizer described by a GGUF file's metadata.
// tokenizer.ggml.model selects the kind: "llama" gives an *SPM, "gpt2" a
// byte-level *BPE (llama.cpp semantics, see NewBPE); other models are not
// supported. For "llama" it reads the tokens, scores and token types (all
// required, of equal length), the special token ids (bos, eos, unknown,
// padding, eot, eom; llama.cpp's defaults 1, 2, 0 when absent or "none",
// an error when outside the vocabulary), add_bos_token (default true), add_eos_token (default false) and
// add_space_prefix (default true), and finds end-of-generation tokens by
// their text as llama.cpp does. For "gpt2" it reads the tokens, the merges
// (tokenizer.ggml.merges, "a b" strings), the optional token types,
// tokenizer.ggml.pre and the same special ids and flags with llama.cpp's
// byte-level BPE defaults.
func FromGGUF(f *gguf.File) (Tokenizer, error) {
	model, err := f.String(keyModel)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	switch model {
	case "llama":
		v, err := spmVocab(f)
		if err != nil {
			return nil, err
		}
		s, err := NewSPM(v)
		if err != nil {
			return nil, fmt.Errorf("%w (in %s)", err, f.Path)
		}
		return s, nil
	case "gpt2":
		return bpeFromGGUF(f)
	default:
		return nil, fmt.Errorf("tokenizer: %s: %s is %q, which kvref does not support; supported: \"llama\" (SentencePiece BPE), \"gpt2\" (byte-level BPE)",
			f.Path, keyModel, model)
	}
}

// spmVocab reads a SentencePiece vocabulary from f, applying llama.cpp's
// defaults and its by-text detection of special tokens.
func spmVocab(f *gguf.File) (Vocab, error) {
	var v Vocab
	var err error
	if v.Tokens, err = f.Strings(keyTokens); err != nil {
		return v, fmt.Errorf("tokenizer: %w", err)
	}
	n := len(v.Tokens)
	if v.Scores, err = tokenArray(f, keyScores, n, f.Float32s); err != nil {
		return v, err
	}
	if v.Types, err = tokenArray(f, keyTypes, n, f.Int32s); err != nil {
		return v, err
	}

	sp, err := readSpecialIDs(f, n, [5]int{1, 2, 0, -1, -1})
	if err != nil {
		return v, err
	}
	v.BOS, v.EOS, v.UNK, v.PAD, v.EOT = sp.ids[0], sp.ids[1], sp.ids[2], sp.ids[3], sp.ids[4]

	if v.AddBOS, err = optBool(f, keyAddBOS, true); err != nil {
		return v, err
	}
	if v.AddEOS, err = optBool(f, keyAddEOS, false); err != nil {
		return v, err
	}
	if v.AddSpacePrefix, err = optBool(f, keyAddSpacePrefix, true); err != nil {
		return v, err
	}

	detectEOG(&v, sp.eom, sp.fim)
	name, _ := f.String(keyName)
	setStripAttrs(&v, name)
	return v, nil
}

// tokenArray reads the per-token array key with get and checks that it has one entry
// per token (n), naming the file, the key and both counts.
func tokenArray[T any](f *gguf.File, key string, n int, get func(key string) ([]T, error)) ([]T, error) {
	x, err := get(key)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if len(x) != n {
		return nil, fmt.Errorf("tokenizer: %s: %s has %d entries, want %d (one per entry of %s)",
			f.Path, key, len(x), n, keyTokens)
	}
	return x, nil
}

// specialIDs are the special token ids a GGUF vocabulary names.
type specialIDs struct {
	ids [5]int // BOS, EOS, UNK, PAD, EOT
	eom int    // end of message, for detectEOG
	fim [3]int // fill-in-the-middle pad, repo and sep, for detectEOG
}

// readSpecialIDs reads the special token ids of a GGUF vocabulary of n tokens with
// tokenID: BOS, EOS, UNK, PAD and EOT with the defaults def (in that order), and EOM and
// the FIM ids (default: none). The error names the first bad key in that order.
func readSpecialIDs(f *gguf.File, n int, def [5]int) (specialIDs, error) {
	var sp specialIDs
	var err error
	for i, key := range [5]string{keyBOS, keyEOS, keyUNK, keyPAD, keyEOT} {
		if sp.ids[i], err = tokenID(f, key, def[i], n); err != nil {
			return sp, err
		}
	}
	if sp.eom, err = tokenID(f, keyEOM, -1, n); err != nil {
		return sp, err
	}
	for i, key := range [3]string{keyFIMPad, keyFIMRep, keyFIMSep} {
		if sp.fim[i], err = tokenID(f, key, -1, n); err != nil {
			return sp, err
		}
	}
	return sp, nil
}

// tokenID reads an optional token-id key. Like llama.cpp it falls back to
// def when the key is absent or says "none" (GGUF files store -1, or its
// unsigned spelling 0xFFFFFFFF); def itself becomes -1 when it is out of
// range. Any other id outside the vocabulary is an error naming the key
// (llama.cpp warns and uses the default, which silently turns a broken file's
// BOS into token 1).
func tokenID(f *gguf.File, key string, def, n int) (int, error) {
	if def >= n {
		def = -1
	}
	val, ok := f.Lookup(key)
	if !ok {
		return def, nil
	}
	if u, ok := val.Uint(); ok {
		switch {
		case u < uint64(n):
			return int(u), nil
		case u == math.MaxUint32 || u == math.MaxUint64 || u == math.MaxUint16:
			return def, nil
		}
		return 0, fmt.Errorf("tokenizer: %s: %s is %d, outside the vocabulary of %d tokens", f.Path, key, u, n)
	}
	if _, ok := val.Int(); ok {
		return def, nil // negative: none
	}
	return 0, fmt.Errorf("tokenizer: %s: metadata key %s is %s, want an integer token id", f.Path, key, val.Type)
}

// optBool reads an optional bool key, returning def when it is absent.
func optBool(f *gguf.File, key string, def bool) (bool, error) {
	b, err := f.Bool(key)
	if errors.Is(err, gguf.ErrKeyNotFound) {
		return def, nil
	}
	if err != nil {
		return false, fmt.Errorf("tokenizer: %w", err)
	}
	return b, nil
}

// setStripAttrs applies llama.cpp's per-model token attributes: for Phi-3
// every special token swallows the whitespace after it, except <unk>, <s>
// and <|endoftext|>.
func setStripAttrs(v *Vocab, name string) {
	name = strings.ToLower(name)
	if !strings.Contains(name, "phi-3") && !strings.Contains(name, "phi3") {
		return
	}
	v.RStrip = make([]bool, len(v.Tokens))
	for id, t := range v.Types {
		if t == TypeControl || t == TypeUserDefined || t == TypeUnknown {
			v.RStrip[id] = true
		}
	}
	for id, t := range v.Tokens {
		switch t {
		case "</s>":
			v.RStrip[id] = true
		case "<unk>", "<s>", "<|endoftext|>":
			v.RStrip[id] = false
		}
	}
}
