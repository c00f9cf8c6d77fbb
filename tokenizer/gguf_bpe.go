package tokenizer

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kvref/kvref/format/gguf"
)

// GGUF metadata keys read for byte-level BPE vocabularies only.
const (
	keyMerges = "tokenizer.ggml.merges"
	keyPre    = "tokenizer.ggml.pre"
)

// bpeFromGGUF builds the byte-level BPE tokenizer of a GGUF file with
// tokenizer.ggml.model = "gpt2", as llama.cpp's vocabulary loader does: it
// reads the tokens and merges (required), the token types (optional: all
// normal), tokenizer.ggml.pre (missing means "default"), the special ids
// (BOS and EOS default to 11 as in llama.cpp, when in range), add_bos_token
// (default true for the Llama 3 family, false otherwise) and add_eos_token
// (default false), and finds end-of-generation tokens by their text.
func bpeFromGGUF(f *gguf.File) (*BPE, error) {
	var v BPEVocab
	var err error
	if v.Tokens, err = f.Strings(keyTokens); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	n := len(v.Tokens)
	if v.Merges, err = f.Strings(keyMerges); err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	if _, ok := f.Lookup(keyTypes); ok {
		if v.Types, err = tokenArray(f, keyTypes, n, f.Int32s); err != nil {
			return nil, err
		}
	}
	if v.Pre, err = f.String(keyPre); err != nil && !errors.Is(err, gguf.ErrKeyNotFound) {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	pt, _, ok := lookupPreType(v.Pre)
	if !ok {
		return nil, fmt.Errorf("tokenizer: %s: %s is %q, which kvref does not support; supported: %v",
			f.Path, keyPre, v.Pre, preTypeNames())
	}

	defBOS := 11
	if pt.noBOS {
		defBOS = -1
	}
	sp, err := readSpecialIDs(f, n, [5]int{defBOS, 11, -1, -1, -1})
	if err != nil {
		return nil, err
	}
	v.BOS, v.EOS, v.UNK, v.PAD, v.EOT = sp.ids[0], sp.ids[1], sp.ids[2], sp.ids[3], sp.ids[4]
	if v.AddBOS, err = optBool(f, keyAddBOS, pt.addBOS); err != nil {
		return nil, err
	}
	if v.AddEOS, err = optBool(f, keyAddEOS, false); err != nil {
		return nil, err
	}

	// detectEOG works on a Vocab; it may turn tokens into control tokens.
	sv := Vocab{Tokens: v.Tokens, Types: slices.Clone(v.Types), EOS: v.EOS, EOT: v.EOT}
	if sv.Types == nil {
		sv.Types = make([]int32, n)
		for i := range sv.Types {
			sv.Types[i] = TypeNormal
		}
	}
	detectEOG(&sv, sp.eom, sp.fim)
	v.Types, v.EOT, v.EOG = sv.Types, sv.EOT, sv.EOG

	t, err := NewBPE(v)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, f.Path)
	}
	return t, nil
}
