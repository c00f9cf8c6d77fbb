package tokenizer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// BPE is a byte-level BPE tokenizer in the style of GPT-2: the vocabularies
// of GPT-2, Llama 3, Qwen2, SmolLM, StarCoder, Falcon, DeepSeek, ... It is
// built from a GGUF vocabulary (tokenizer.ggml.model = "gpt2", see NewBPE
// and FromGGUF), where it reproduces llama.cpp's llm_tokenizer_bpe, or from
// a Hugging Face tokenizer.json (FromTokenizerJSON), where it reproduces
// the tokenizers library, including BPE models with byte_fallback such as
// Llama 2's and Mistral's.
//
// Encoding text goes: split out special and added tokens (longest match);
// normalize (tokenizer.json only); pre-tokenize into words with the
// pre-tokenizer's regexes, writing each byte as a printable character of
// GPT-2's byte alphabet; then merge each word's characters pairwise, the
// lowest-ranked merge first. Decoding maps the characters back to bytes.
//
// A BPE is safe for concurrent use.
type BPE struct {
	vocabCore
	model bpeModel

	decText []string // the string a Hugging Face decoder sees for id
	pieces  [][]byte // Piece(id), precomputed

	added    []*addedToken       // special and user-defined tokens
	byLength []*addedToken       // added, longest first (llama.cpp's partition order)
	addedID  map[int]*addedToken // added tokens by id
	rawTrie  *tokenTrie          // Hugging Face: added tokens matched in the raw text
	normTrie *tokenTrie          // Hugging Face: added tokens matched in the normalized text
	hf       bool                // Hugging Face semantics (partition, normalizer, decoder)
	// specialText holds the contents of the special added tokens: Hugging
	// Face's decode skips a token whose string is one of them.
	specialText map[string]bool
	norm        normalizer   // nil for none
	pre         preTokenizer // nil: the whole text is one word
	dec         decoder      // Hugging Face decoder; nil joins tokens with spaces
	preName     string       // tokenizer.ggml.pre, for GGUF vocabularies
	prefix      []int        // ids Encode with addSpecial puts first
	suffix      []int        // ids Encode with addSpecial puts last
}

var _ Tokenizer = (*BPE)(nil)

// BPEVocab is a byte-level BPE vocabulary as GGUF stores it.
//
// Special ids are -1 when absent. Types and the optional LStrip, RStrip and
// EOG may be nil; Types nil means every token is normal.
type BPEVocab struct {
	Tokens []string // token text (in GPT-2's byte alphabet), indexed by id
	Types  []int32  // GGUF token types (TypeNormal, TypeControl, TypeUserDefined, ...)
	// Merges lists the merges, best first, each as the two token texts
	// separated by a space ("Ġ t"), as in tokenizer.ggml.merges.
	Merges []string
	// Pre names the pre-tokenizer, as tokenizer.ggml.pre does ("gpt-2",
	// "llama-bpe", "qwen2", ...); "" means "default". It also decides
	// whether whole-word tokens skip merging (Llama 3's ignore_merges).
	Pre string

	BOS, EOS, UNK, PAD, EOT int

	// EOG lists further end-of-generation ids besides EOS and EOT.
	EOG []int

	AddBOS, AddEOS bool // Encode with addSpecial adds BOS / EOS

	// LStrip and RStrip, when non-nil, mark special or user-defined tokens
	// that swallow the whitespace to their left / right.
	LStrip, RStrip []bool
}

// NewBPE builds a byte-level BPE tokenizer from a GGUF-style vocabulary,
// with llama.cpp's semantics: special and user-defined tokens are split out
// of the text longest first, the pre-tokenizer is llama.cpp's regex list for
// v.Pre, merges come from v.Merges (the first of duplicate merges counts),
// and a character with no token comes out as the tokens of its single bytes
// where those exist. It returns a descriptive error for malformed input.
// v is copied.
func NewBPE(v BPEVocab) (*BPE, error) {
	n := len(v.Tokens)
	if n == 0 {
		return nil, fmt.Errorf("tokenizer: BPE vocabulary has no tokens")
	}
	if v.Types != nil && len(v.Types) != n {
		return nil, fmt.Errorf("tokenizer: BPE vocabulary has %d tokens but %d token types", n, len(v.Types))
	}
	if v.LStrip != nil && len(v.LStrip) != n {
		return nil, fmt.Errorf("tokenizer: BPE vocabulary has %d tokens but %d LStrip flags", n, len(v.LStrip))
	}
	if v.RStrip != nil && len(v.RStrip) != n {
		return nil, fmt.Errorf("tokenizer: BPE vocabulary has %d tokens but %d RStrip flags", n, len(v.RStrip))
	}
	pt, pre, ok := lookupPreType(v.Pre)
	if !ok {
		return nil, fmt.Errorf("tokenizer: unknown BPE pre-tokenizer %q (tokenizer.ggml.pre); kvref supports %s",
			v.Pre, strings.Join(preTypeNames(), ", "))
	}
	for _, s := range []struct {
		name string
		id   int
	}{{"BOS", v.BOS}, {"EOS", v.EOS}, {"UNK", v.UNK}, {"PAD", v.PAD}, {"EOT", v.EOT}} {
		if s.id < -1 || s.id >= n {
			return nil, fmt.Errorf("tokenizer: %s id %d out of range [0, %d) (use -1 for none)", s.name, s.id, n)
		}
	}
	for _, id := range v.EOG {
		if id < 0 || id >= n {
			return nil, fmt.Errorf("tokenizer: EOG id %d out of range [0, %d)", id, n)
		}
	}
	if v.AddBOS && v.BOS < 0 {
		return nil, fmt.Errorf("tokenizer: AddBOS is set but the vocabulary has no BOS token")
	}
	if v.AddEOS && v.EOS < 0 {
		return nil, fmt.Errorf("tokenizer: AddEOS is set but the vocabulary has no EOS token")
	}

	t := &BPE{
		vocabCore: vocabCore{
			text: make([]string, n), types: make([]int32, n), eog: make(map[int]bool),
			bos: v.BOS, eos: v.EOS, unk: v.UNK, pad: v.PAD, eot: v.EOT,
		},
		addedID: make(map[int]*addedToken),
		preName: pre,
	}
	t.model = bpeModel{
		vocab:        make(map[string]int32, n),
		merges:       make(map[uint64]merge, len(v.Merges)),
		ignoreMerges: pt.ignoreMerges,
		unk:          -1,
		llamaBytes:   true,
	}
	for id, s := range v.Tokens {
		if s == "" {
			// llama.cpp renames empty tokens so that they stay unique.
			s = "[EMPTY_" + strconv.Itoa(id) + "]"
		}
		if prev, dup := t.model.vocab[s]; dup {
			return nil, fmt.Errorf("tokenizer: token %q appears twice, as ids %d and %d", s, prev, id)
		}
		t.model.vocab[s] = int32(id)
		t.text[id] = s
		t.types[id] = TypeNormal
		if v.Types != nil {
			t.types[id] = v.Types[id]
			if t.types[id] < TypeUndefined || t.types[id] > TypeByte {
				return nil, fmt.Errorf("tokenizer: token %d (%q) has unknown type %d (want 0..6)", id, s, t.types[id])
			}
		}
	}
	for rank, m := range v.Merges {
		// llama.cpp splits at the first space after the first byte.
		sp := strings.IndexByte(m[min(1, len(m)):], ' ')
		if sp < 0 {
			continue
		}
		sp += min(1, len(m))
		left, right := m[:sp], m[sp+1:]
		l, okL := t.model.vocab[left]
		r, okR := t.model.vocab[right]
		res, okRes := t.model.vocab[left+right]
		if !okL || !okR || !okRes {
			continue // can never apply to tokens of this vocabulary
		}
		key := pairKey(l, r)
		if _, dup := t.model.merges[key]; !dup {
			t.model.merges[key] = merge{rank: int32(rank), id: res}
		}
	}
	for id, ty := range t.types {
		if ty == TypeControl || ty == TypeUserDefined || ty == TypeUnknown {
			tok := &addedToken{
				content: t.text[id],
				id:      id,
				special: ty != TypeUserDefined,
				lstrip:  v.LStrip != nil && v.LStrip[id],
				rstrip:  v.RStrip != nil && v.RStrip[id],
			}
			t.added = append(t.added, tok)
			t.addedID[id] = tok
		}
	}
	t.byLength = slices.Clone(t.added)
	sortByLength(t.byLength)

	var seq preSequence
	for _, p := range pt.regexes {
		re, err := compileRegex(p, false)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: pre-tokenizer %q: regex %q: %w", pre, p, err)
		}
		seq = append(seq, &regexSplit{re: re, behavior: splitIsolated})
	}
	t.pre = append(seq, &byteLevelPre{})

	for _, id := range append([]int{v.EOS, v.EOT}, v.EOG...) {
		if id >= 0 {
			t.eog[id] = true
		}
	}
	if v.AddBOS {
		t.prefix = []int{v.BOS}
	}
	if v.AddEOS {
		t.suffix = []int{v.EOS}
	}
	t.pieces = make([][]byte, n)
	for id := range n {
		t.pieces[id] = t.llamaPiece(id)
	}
	return t, nil
}

// llamaPiece is llama.cpp's token_to_piece(special=false) for a BPE
// vocabulary: control, unknown and unused tokens give nothing, user-defined
// ones their text, byte tokens their byte, normal ones their text mapped
// back from the byte alphabet. (A character outside the alphabet keeps its
// UTF-8 bytes, where llama.cpp writes "[UNK_BYTE_0x...]".)
func (t *BPE) llamaPiece(id int) []byte {
	s := t.text[id]
	switch t.types[id] {
	case TypeNormal:
		return byteDecodeLoose(s, nil)
	case TypeUserDefined:
		return []byte(s)
	case TypeByte:
		if b, ok := parseByteToken(s); ok {
			return []byte{b}
		}
	}
	return nil
}

// AddBOS reports whether Encode with addSpecial prepends BOS.
func (t *BPE) AddBOS() bool { return t.bos >= 0 && slices.Contains(t.prefix, t.bos) }

// AddEOS reports whether Encode with addSpecial appends EOS.
func (t *BPE) AddEOS() bool { return t.eos >= 0 && slices.Contains(t.suffix, t.eos) }

// SpecialPrefix returns the ids Encode with addSpecial puts before the text
// (usually just BOS, or nothing). The caller owns the slice.
func (t *BPE) SpecialPrefix() []int { return slices.Clone(t.prefix) }

// SpecialSuffix returns the ids Encode with addSpecial puts after the text
// (usually nothing, or EOS). The caller owns the slice.
func (t *BPE) SpecialSuffix() []int { return slices.Clone(t.suffix) }

// TokenID returns the id of the token whose vocabulary text is s: an added
// or special token's content, or a model token in the byte alphabet.
func (t *BPE) TokenID(s string) (int, bool) {
	for _, a := range t.added {
		if a.content == s {
			return a.id, true
		}
	}
	id, ok := t.model.vocab[s]
	return int(id), ok
}

// Pre returns the name of the GGUF pre-tokenizer (tokenizer.ggml.pre), or
// "" for a tokenizer built from tokenizer.json.
func (t *BPE) Pre() string { return t.preName }
