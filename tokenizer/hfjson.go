package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// FromTokenizerJSON builds a tokenizer from a Hugging Face tokenizer.json
// and, optionally, its tokenizer_config.json (config may be nil). The
// result is a *BPE that behaves as the tokenizers library does.
//
// Supported: model BPE (byte-level, or with byte_fallback, unk_token,
// fuse_unk, ignore_merges, continuing_subword_prefix, end_of_word_suffix;
// merges as "a b" strings or [a, b] pairs); added_tokens with their
// special, lstrip, rstrip, single_word and normalized flags; normalizers
// Sequence, Prepend, Replace, NFC, NFD, NFKC, NFKD, Lowercase, Strip,
// StripAccents; pre-tokenizers Sequence, ByteLevel, Split, Digits,
// Metaspace, WhitespaceSplit; post-processors TemplateProcessing,
// ByteLevel, RobertaProcessing, BertProcessing and Sequence; decoders
// ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace and Sequence.
// That covers the tokenizer.json files of GPT-2, Llama 2, Mistral, Llama 3,
// Qwen2, SmolLM and their relatives. Anything else is an error that names
// the component.
//
// tokenizer_config.json supplies bos_token, eos_token, unk_token and
// pad_token (strings or {"content": ...} objects) and add_bos_token /
// add_eos_token, which, when set, replace what the post-processor adds, as
// transformers does. Without an eos_token, "<|endoftext|>" is EOS when the
// vocabulary has it (transformers' GPT-2 default).
//
// The input is untrusted: malformed files give errors, never panics.
// Token ids are assigned as the tokenizers library does (the "id" fields of
// added_tokens are not trusted).
func FromTokenizerJSON(data []byte, config []byte) (Tokenizer, error) {
	t, err := bpeFromTokenizerJSON(data, config)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// maxNesting bounds how deeply Sequence components may nest.
const maxNesting = 64

// hfFile is the top level of tokenizer.json.
type hfFile struct {
	Version       *string          `json:"version"`
	AddedTokens   []hfAddedToken   `json:"added_tokens"`
	Normalizer    json.RawMessage  `json:"normalizer"`
	PreTokenizer  json.RawMessage  `json:"pre_tokenizer"`
	PostProcessor json.RawMessage  `json:"post_processor"`
	Decoder       json.RawMessage  `json:"decoder"`
	Model         *json.RawMessage `json:"model"`
}

// hfAddedToken is one entry of added_tokens.
type hfAddedToken struct {
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized *bool  `json:"normalized"`
	Special    bool   `json:"special"`
}

// hfModel is the "model" object of a BPE tokenizer.json.
type hfModel struct {
	Type                    *string          `json:"type"`
	Dropout                 *float64         `json:"dropout"`
	UnkToken                *string          `json:"unk_token"`
	ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string          `json:"end_of_word_suffix"`
	FuseUnk                 bool             `json:"fuse_unk"`
	ByteFallback            bool             `json:"byte_fallback"`
	IgnoreMerges            bool             `json:"ignore_merges"`
	Vocab                   map[string]int64 `json:"vocab"`
	Merges                  json.RawMessage  `json:"merges"`
}

// hfPattern is a Split / Replace pattern: {"String": ...} or {"Regex": ...}.
type hfPattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

// hfComponent is any normalizer, pre-tokenizer, post-processor or decoder:
// its type and every field any of the supported types uses.
type hfComponent struct {
	Type string `json:"type"`

	// Sequence
	Normalizers   []json.RawMessage `json:"normalizers"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
	Decoders      []json.RawMessage `json:"decoders"`
	Processors    []json.RawMessage `json:"processors"`

	// Prepend, Replace, Split, Strip (decoder)
	Prepend  *string    `json:"prepend"`
	Pattern  *hfPattern `json:"pattern"`
	Content  *string    `json:"content"`
	Behavior *string    `json:"behavior"`
	Invert   bool       `json:"invert"`
	Start    *int64     `json:"start"`
	Stop     *int64     `json:"stop"`

	// Strip (normalizer)
	StripLeft  *bool `json:"strip_left"`
	StripRight *bool `json:"strip_right"`

	// ByteLevel, Metaspace
	AddPrefixSpace *bool   `json:"add_prefix_space"`
	UseRegex       *bool   `json:"use_regex"`
	Replacement    *string `json:"replacement"`
	PrependScheme  *string `json:"prepend_scheme"`
	Split          *bool   `json:"split"`

	// Digits
	IndividualDigits bool `json:"individual_digits"`

	// TemplateProcessing
	Single        []map[string]hfTemplateRef  `json:"single"`
	SpecialTokens map[string]hfTemplateTokens `json:"special_tokens"`

	// RobertaProcessing, BertProcessing: [token, id]
	Sep []json.RawMessage `json:"sep"`
	Cls []json.RawMessage `json:"cls"`
}

// hfTemplateRef is the body of a TemplateProcessing piece:
// {"SpecialToken": {"id": "<s>"}} or {"Sequence": {"id": "A"}}.
type hfTemplateRef struct {
	ID string `json:"id"`
}

// hfTemplateTokens is an entry of TemplateProcessing's special_tokens.
type hfTemplateTokens struct {
	ID  string  `json:"id"`
	IDs []int64 `json:"ids"`
}

// hfConfig holds the fields of tokenizer_config.json kvref uses.
type hfConfig struct {
	BOSToken    json.RawMessage `json:"bos_token"`
	EOSToken    json.RawMessage `json:"eos_token"`
	UNKToken    json.RawMessage `json:"unk_token"`
	PADToken    json.RawMessage `json:"pad_token"`
	AddBOSToken *bool           `json:"add_bos_token"`
	AddEOSToken *bool           `json:"add_eos_token"`
}

// errJSON formats an error about tokenizer.json.
func errJSON(format string, args ...any) error {
	return fmt.Errorf("tokenizer: tokenizer.json: "+format, args...)
}

// isNull reports whether a raw JSON value is absent or null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// bpeFromTokenizerJSON does the work of FromTokenizerJSON.
func bpeFromTokenizerJSON(data, config []byte) (*BPE, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, errJSON("%v", err)
	}
	if f.Version != nil && *f.Version != "1.0" {
		return nil, errJSON("unknown version %q (want \"1.0\")", *f.Version)
	}
	if f.Model == nil || isNull(*f.Model) {
		return nil, errJSON("no model")
	}
	var m hfModel
	if err := json.Unmarshal(*f.Model, &m); err != nil {
		return nil, errJSON("model: %v", err)
	}
	if m.Type != nil && *m.Type != "BPE" {
		return nil, errJSON("model type %q is not supported (kvref supports BPE)", *m.Type)
	}
	if m.Type == nil && (m.Vocab == nil || isNull(m.Merges)) {
		return nil, errJSON("model has no \"type\" and is not a BPE model (no vocab and merges)")
	}
	if m.Vocab == nil || isNull(m.Merges) {
		return nil, errJSON("BPE model: missing vocab or merges")
	}
	if m.Dropout != nil && *m.Dropout != 0 {
		if *m.Dropout < 0 || *m.Dropout > 1 || math.IsNaN(*m.Dropout) {
			return nil, errJSON("BPE model: dropout %v is not a probability", *m.Dropout)
		}
		return nil, errJSON("BPE model: dropout %v is not supported (it makes encoding random)", *m.Dropout)
	}

	t := &BPE{
		vocabCore: vocabCore{bos: -1, eos: -1, unk: -1, pad: -1, eot: -1, eog: make(map[int]bool)},
		hf:        true, addedID: make(map[int]*addedToken),
	}
	if err := t.loadHFVocab(&m); err != nil {
		return nil, err
	}
	var err error
	if t.norm, err = parseNormalizer(f.Normalizer, 0); err != nil {
		return nil, err
	}
	if t.pre, err = parsePreTokenizer(f.PreTokenizer, 0); err != nil {
		return nil, err
	}
	if t.dec, err = parseDecoder(f.Decoder, 0); err != nil {
		return nil, err
	}
	if err := t.loadHFAddedTokens(f.AddedTokens); err != nil {
		return nil, err
	}
	if err := t.loadHFPostProcessor(f.PostProcessor); err != nil {
		return nil, err
	}
	if err := t.loadHFConfig(config); err != nil {
		return nil, err
	}
	t.finishHF()
	return t, nil
}

// loadHFVocab reads the BPE model's vocabulary and merges.
func (t *BPE) loadHFVocab(m *hfModel) error {
	n := len(m.Vocab)
	if n == 0 {
		return errJSON("BPE model: empty vocab")
	}
	t.model = bpeModel{
		vocab:        make(map[string]int32, n),
		ignoreMerges: m.IgnoreMerges,
		byteFallback: m.ByteFallback,
		fuseUnk:      m.FuseUnk,
		unk:          -1,
	}
	if m.ContinuingSubwordPrefix != nil {
		t.model.subwordPfx = *m.ContinuingSubwordPrefix
	}
	if m.EndOfWordSuffix != nil {
		t.model.wordSfx = *m.EndOfWordSuffix
	}
	maxID := int64(-1)
	for s, id := range m.Vocab {
		if id < 0 || id > maxVocabID(n) {
			return errJSON("BPE model: token %q has id %d, outside [0, %d]", s, id, maxVocabID(n))
		}
		maxID = max(maxID, id)
	}
	t.text = make([]string, maxID+1)
	t.types = make([]int32, maxID+1)
	for s, id := range m.Vocab {
		if t.types[id] != TypeUndefined {
			a, b := t.text[id], s
			if b < a {
				a, b = b, a
			}
			return errJSON("BPE model: tokens %q and %q both have id %d", a, b, id)
		}
		t.model.vocab[s] = int32(id)
		t.text[id] = s
		t.types[id] = TypeNormal
	}
	for i := range t.model.byteTok {
		t.model.byteTok[i] = -1
		if id, ok := t.model.vocab[byteTokenText(byte(i))]; ok {
			t.model.byteTok[i] = id
			if m.ByteFallback {
				t.types[id] = TypeByte
			}
		}
	}
	if m.UnkToken != nil {
		id, ok := t.model.vocab[*m.UnkToken]
		if !ok {
			return errJSON("BPE model: unk_token %q is not in the vocab", *m.UnkToken)
		}
		t.model.unk, t.unk = id, int(id)
		t.types[id] = TypeUnknown
	}
	return t.loadHFMerges(m.Merges)
}

// maxVocabID bounds the ids of a vocabulary of n entries: ids may leave
// gaps, but not so many that a small file makes kvref allocate gigabytes.
func maxVocabID(n int) int64 { return 4*int64(n) + 1024 }

// loadHFMerges reads merges given as "a b" strings or as [a, b] pairs.
// As in the tokenizers library, both tokens and their concatenation must
// be in the vocab, and a later duplicate replaces an earlier one.
func (t *BPE) loadHFMerges(raw json.RawMessage) error {
	var items []any // one pass of the decoder: strings and []any pairs
	if err := json.Unmarshal(raw, &items); err != nil {
		return errJSON("BPE model: merges: %v", err)
	}
	t.model.merges = make(map[uint64]merge, len(items))
	for rank, it := range items {
		var left, right string
		switch x := it.(type) {
		case string:
			parts := strings.Split(x, " ")
			if len(parts) != 2 {
				return errJSON("BPE model: merge %d (%q) is not two tokens separated by one space", rank, shorten(x, 60))
			}
			left, right = parts[0], parts[1]
		case []any:
			var ok1, ok2 bool
			if len(x) == 2 {
				left, ok1 = x[0].(string)
				right, ok2 = x[1].(string)
			}
			if !ok1 || !ok2 {
				return errJSON("BPE model: merge %d is neither \"a b\" nor [\"a\", \"b\"]", rank)
			}
		default:
			return errJSON("BPE model: merge %d is neither \"a b\" nor [\"a\", \"b\"]", rank)
		}
		l, ok := t.model.vocab[left]
		if !ok {
			return errJSON("BPE model: merge %d: token %q is not in the vocab", rank, left)
		}
		r, ok := t.model.vocab[right]
		if !ok {
			return errJSON("BPE model: merge %d: token %q is not in the vocab", rank, right)
		}
		merged := left + strings.TrimPrefix(right, t.model.subwordPfx)
		res, ok := t.model.vocab[merged]
		if !ok {
			return errJSON("BPE model: merge %d: merged token %q is not in the vocab", rank, merged)
		}
		t.model.merges[pairKey(l, r)] = merge{rank: int32(rank), id: res}
	}
	return nil
}

// loadHFAddedTokens registers added_tokens as the tokenizers library does:
// a token already in the vocab keeps its id, a new one gets the next id
// after the vocab (or after the largest added id). Special tokens are
// control tokens; the others user-defined tokens.
func (t *BPE) loadHFAddedTokens(list []hfAddedToken) error {
	vocabSize := int64(len(t.model.vocab))
	byContent := map[string]*addedToken{}
	var special, classic []*addedToken
	specialSet := map[string]bool{}
	maxAdded := int64(-1)
	for i, a := range list {
		if a.Content == "" {
			continue
		}
		if !utf8.ValidString(a.Content) {
			return errJSON("added_tokens[%d]: content is not valid UTF-8", i)
		}
		normalized := !a.Special
		if a.Normalized != nil {
			normalized = *a.Normalized
		}
		tok := &addedToken{content: a.Content, special: a.Special, lstrip: a.LStrip, rstrip: a.RStrip,
			singleWord: a.SingleWord, normalized: normalized}
		if a.Special && !specialSet[a.Content] {
			specialSet[a.Content] = true
			special = append(special, tok)
		}
		var id int64
		if prev, ok := byContent[a.Content]; ok {
			id = int64(prev.id)
		} else if vid, ok := t.model.vocab[a.Content]; ok {
			id = int64(vid)
		} else {
			id = vocabSize
			if maxAdded >= 0 && (maxAdded >= vocabSize || vocabSize == 0) {
				id = maxAdded + 1
			}
		}
		if id > maxVocabID(len(t.model.vocab)+len(list)) {
			return errJSON("added_tokens[%d]: too many tokens", i)
		}
		tok.id = int(id)
		byContent[a.Content] = tok
		maxAdded = max(maxAdded, id)
		if !specialSet[a.Content] {
			classic = append(classic, tok)
		}
		t.addedID[tok.id] = tok // the latest token for an id wins, as in added_tokens_map_r
	}
	if n := int(maxAdded + 1); n > len(t.text) {
		t.text = append(t.text, make([]string, n-len(t.text))...)
		t.types = append(t.types, make([]int32, n-len(t.types))...)
	}
	// The patterns, in the library's order: special tokens, then the others.
	// A pattern's id is that of its content; its flags those of the latest
	// token with that id.
	var raw, normed []*addedToken
	for _, tok := range append(special, classic...) {
		cur := t.addedID[byContent[tok.content].id]
		p := &addedToken{content: tok.content, id: cur.id, special: cur.special, lstrip: cur.lstrip,
			rstrip: cur.rstrip, singleWord: cur.singleWord, normalized: cur.normalized}
		if tok.normalized {
			if t.norm != nil {
				p.content = t.norm.normalize(p.content)
			}
			normed = append(normed, p)
		} else {
			raw = append(raw, p)
		}
	}
	t.rawTrie = newTokenTrie(raw)
	t.normTrie = newTokenTrie(normed)
	for id, tok := range t.addedID {
		t.added = append(t.added, tok)
		t.text[id] = tok.content
		if tok.special {
			t.types[id] = TypeControl
		} else {
			t.types[id] = TypeUserDefined
		}
	}
	slices.SortFunc(t.added, func(a, b *addedToken) int { return a.id - b.id })
	t.specialText = specialSet
	return nil
}

// loadHFPostProcessor reads which tokens Encode with addSpecial adds.
func (t *BPE) loadHFPostProcessor(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	pre, suf, err := t.parsePostProcessor(raw, 0)
	if err != nil {
		return err
	}
	t.prefix, t.suffix = pre, suf
	return nil
}

// parsePostProcessor returns the ids a post-processor puts before and after
// a single sequence.
func (t *BPE) parsePostProcessor(raw json.RawMessage, depth int) (prefix, suffix []int, err error) {
	var c hfComponent
	if err := decodeComponent(raw, &c, "post_processor", depth); err != nil {
		return nil, nil, err
	}
	checkID := func(id int64, what string) (int, error) {
		if id < 0 || id >= int64(len(t.text)) || t.types[id] == TypeUndefined {
			return 0, errJSON("post_processor %s: token id %d is not in the vocabulary", what, id)
		}
		return int(id), nil
	}
	switch c.Type {
	case "ByteLevel":
		return nil, nil, nil
	case "TemplateProcessing":
		seen := false
		for _, piece := range c.Single {
			if len(piece) != 1 {
				return nil, nil, errJSON("post_processor TemplateProcessing: a piece of single must have one key")
			}
			for kind, ref := range piece {
				switch kind {
				case "Sequence":
					if ref.ID != "A" || seen {
						return nil, nil, errJSON("post_processor TemplateProcessing: single must use sequence $A once, found %q", ref.ID)
					}
					seen = true
				case "SpecialToken":
					st, ok := c.SpecialTokens[ref.ID]
					if !ok {
						return nil, nil, errJSON("post_processor TemplateProcessing: special token %q is not in special_tokens", ref.ID)
					}
					for _, id := range st.IDs {
						v, err := checkID(id, "TemplateProcessing")
						if err != nil {
							return nil, nil, err
						}
						if seen {
							suffix = append(suffix, v)
						} else {
							prefix = append(prefix, v)
						}
					}
				default:
					return nil, nil, errJSON("post_processor TemplateProcessing: unknown piece %q", kind)
				}
			}
		}
		if !seen {
			return nil, nil, errJSON("post_processor TemplateProcessing: single has no $A")
		}
		return prefix, suffix, nil
	case "RobertaProcessing", "BertProcessing":
		cls, err := tokenPairID(c.Cls, c.Type+" cls")
		if err != nil {
			return nil, nil, err
		}
		sep, err := tokenPairID(c.Sep, c.Type+" sep")
		if err != nil {
			return nil, nil, err
		}
		a, err := checkID(cls, c.Type+" cls")
		if err != nil {
			return nil, nil, err
		}
		b, err := checkID(sep, c.Type+" sep")
		if err != nil {
			return nil, nil, err
		}
		return []int{a}, []int{b}, nil
	case "Sequence":
		for i, p := range c.Processors {
			pre, suf, err := t.parsePostProcessor(p, depth+1)
			if err != nil {
				return nil, nil, err
			}
			if len(pre)+len(suf) == 0 {
				continue
			}
			if len(prefix)+len(suffix) > 0 {
				return nil, nil, errJSON("post_processor Sequence: processor %d adds tokens after another one did; kvref supports one", i)
			}
			prefix, suffix = pre, suf
		}
		return prefix, suffix, nil
	}
	return nil, nil, errJSON("post_processor type %q is not supported (kvref supports TemplateProcessing, ByteLevel, RobertaProcessing, BertProcessing, Sequence)", c.Type)
}

// tokenPairID reads the id of a ["token", id] pair.
func tokenPairID(pair []json.RawMessage, what string) (int64, error) {
	var id int64
	if len(pair) != 2 || json.Unmarshal(pair[1], &id) != nil {
		return 0, errJSON("post_processor %s: want [\"token\", id]", what)
	}
	return id, nil
}

// loadHFConfig applies tokenizer_config.json.
func (t *BPE) loadHFConfig(data []byte) error {
	var c hfConfig
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &c); err != nil {
			return fmt.Errorf("tokenizer: tokenizer_config.json: %w", err)
		}
	}
	lookup := func(raw json.RawMessage, name string) (int, error) {
		if isNull(raw) {
			return -1, nil
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			var obj struct {
				Content *string `json:"content"`
			}
			if json.Unmarshal(raw, &obj) != nil || obj.Content == nil {
				return 0, fmt.Errorf("tokenizer: tokenizer_config.json: %s is neither a string nor {\"content\": ...}", name)
			}
			s = *obj.Content
		}
		id, ok := t.TokenID(s)
		if !ok {
			return 0, fmt.Errorf("tokenizer: tokenizer_config.json: %s %q is not in the vocabulary", name, s)
		}
		return id, nil
	}
	var err error
	var bos, eos, unk, pad int
	if bos, err = lookup(c.BOSToken, "bos_token"); err != nil {
		return err
	}
	if eos, err = lookup(c.EOSToken, "eos_token"); err != nil {
		return err
	}
	if unk, err = lookup(c.UNKToken, "unk_token"); err != nil {
		return err
	}
	if pad, err = lookup(c.PADToken, "pad_token"); err != nil {
		return err
	}
	// Without a config, the post-processor's tokens tell BOS and EOS.
	if bos < 0 && len(t.prefix) > 0 {
		bos = t.prefix[0]
	}
	if eos < 0 && len(t.suffix) > 0 {
		eos = t.suffix[len(t.suffix)-1]
	}
	if eos < 0 {
		if id, ok := t.TokenID("<|endoftext|>"); ok {
			eos = id
		}
	}
	t.bos, t.eos, t.pad = bos, eos, pad
	if t.unk < 0 {
		t.unk = unk
	}
	if c.AddBOSToken != nil {
		if *c.AddBOSToken && t.bos < 0 {
			return errors.New("tokenizer: tokenizer_config.json: add_bos_token is true but there is no bos_token")
		}
		t.prefix = nil
		if *c.AddBOSToken {
			t.prefix = []int{t.bos}
		}
	}
	if c.AddEOSToken != nil {
		if *c.AddEOSToken && t.eos < 0 {
			return errors.New("tokenizer: tokenizer_config.json: add_eos_token is true but there is no eos_token")
		}
		t.suffix = nil
		if *c.AddEOSToken {
			t.suffix = []int{t.eos}
		}
	}
	return nil
}

// finishHF computes what the decoder sees for each id, the pieces and the
// end-of-generation ids.
func (t *BPE) finishHF() {
	n := len(t.text)
	t.decText = slices.Clone(t.text)
	for id, a := range t.addedID {
		// The library stores normalized added tokens in their normalized
		// form, and that is what its decoder gets.
		if a.normalized && t.norm != nil {
			t.decText[id] = t.norm.normalize(a.content)
		}
	}
	t.pieces = make([][]byte, n)
	for id := range n {
		switch {
		case t.types[id] == TypeUndefined || t.types[id] == TypeControl:
		case t.types[id] == TypeUserDefined || t.dec == nil:
			t.pieces[id] = []byte(t.decText[id])
		default:
			t.pieces[id] = []byte(t.dec.piece(t.decText[id]))
		}
	}
	// The end-of-generation ids llama.cpp would find in this vocabulary: EOS,
	// and the end-of-turn, end-of-message and FIM tokens by their text. Token
	// types stay as added_tokens says.
	scan := scanEOG(t.text, t.eos, -1, -1, [3]int{-1, -1, -1})
	t.eot = scan.eot
	for _, id := range scan.eog {
		t.eog[id] = true
	}
}

// decodeComponent unmarshals a component and checks its nesting depth.
func decodeComponent(raw json.RawMessage, c *hfComponent, what string, depth int) error {
	if depth > maxNesting {
		return errJSON("%s: Sequence nested more than %d deep", what, maxNesting)
	}
	if err := json.Unmarshal(raw, c); err != nil {
		return errJSON("%s: %v", what, err)
	}
	return nil
}

// parseComponent reads the tokenizer.json component raw (what names its kind: "normalizer",
// "pre_tokenizer", "decoder") at nesting depth: null gives none, the zero T; a Sequence
// gives seq of its parts' results other than none, each part read by parseComponent one
// level deeper; any other type is read by one.
func parseComponent[T comparable](raw json.RawMessage, what string, depth int,
	parts func(*hfComponent) []json.RawMessage, seq func([]T) T, one func(*hfComponent) (T, error)) (T, error) {
	var none T
	if isNull(raw) {
		return none, nil
	}
	var c hfComponent
	if err := decodeComponent(raw, &c, what, depth); err != nil {
		return none, err
	}
	if c.Type != "Sequence" {
		return one(&c)
	}
	var items []T
	for _, r := range parts(&c) {
		x, err := parseComponent(r, what, depth+1, parts, seq, one)
		if err != nil {
			return none, err
		}
		if x != none {
			items = append(items, x)
		}
	}
	return seq(items), nil
}

// replaceOf reads the pattern and the content of a Replace component (what:
// "normalizer Replace", "decoder Replace").
func replaceOf(c *hfComponent, what string) (*regexSplit, string, error) {
	p, err := parsePattern(c.Pattern, what)
	if err != nil {
		return nil, "", err
	}
	if c.Content == nil {
		return nil, "", errJSON("%s: missing content", what)
	}
	return p, *c.Content, nil
}

// parsePattern compiles a Split / Replace pattern; a String pattern is a
// literal.
func parsePattern(p *hfPattern, what string) (re *regexSplit, err error) {
	switch {
	case p == nil:
		return nil, errJSON("%s: missing pattern", what)
	case p.Regex != nil:
		r, err := compileRegex(*p.Regex, true)
		if err != nil {
			return nil, errJSON("%s: regex %q: %v", what, shorten(*p.Regex, 80), err)
		}
		return &regexSplit{re: r}, nil
	case p.String != nil:
		return &regexSplit{literal: *p.String}, nil
	}
	return nil, errJSON("%s: pattern is neither {\"String\": ...} nor {\"Regex\": ...}", what)
}

// parseNormalizer reads a normalizer; null gives nil.
func parseNormalizer(raw json.RawMessage, depth int) (normalizer, error) {
	return parseComponent(raw, "normalizer", depth, func(c *hfComponent) []json.RawMessage { return c.Normalizers },
		func(parts []normalizer) normalizer { return normSequence(parts) }, normalizerOf)
}

// normalizerOf reads a normalizer other than a Sequence.
func normalizerOf(c *hfComponent) (normalizer, error) {
	switch c.Type {
	case "Prepend":
		if c.Prepend == nil {
			return nil, errJSON("normalizer Prepend: missing prepend")
		}
		return prependNorm{*c.Prepend}, nil
	case "Replace":
		p, content, err := replaceOf(c, "normalizer Replace")
		if err != nil {
			return nil, err
		}
		return replaceNorm{re: p.re, literal: p.literal, content: content}, nil
	case "NFC":
		return unicodeNorm{norm.NFC}, nil
	case "NFD":
		return unicodeNorm{norm.NFD}, nil
	case "NFKC":
		return unicodeNorm{norm.NFKC}, nil
	case "NFKD":
		return unicodeNorm{norm.NFKD}, nil
	case "Lowercase":
		return lowercaseNorm{}, nil
	case "StripAccents":
		return stripAccentsNorm{}, nil
	case "Strip":
		return stripNorm{left: c.StripLeft == nil || *c.StripLeft, right: c.StripRight == nil || *c.StripRight}, nil
	}
	return nil, errJSON("normalizer type %q is not supported (kvref supports Sequence, Prepend, Replace, NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents)", c.Type)
}

// parsePreTokenizer reads a pre-tokenizer; null gives nil.
func parsePreTokenizer(raw json.RawMessage, depth int) (preTokenizer, error) {
	return parseComponent(raw, "pre_tokenizer", depth, func(c *hfComponent) []json.RawMessage { return c.PreTokenizers },
		func(parts []preTokenizer) preTokenizer { return preSequence(parts) }, preTokenizerOf)
}

// preTokenizerOf reads a pre-tokenizer other than a Sequence.
func preTokenizerOf(c *hfComponent) (preTokenizer, error) {
	switch c.Type {
	case "ByteLevel":
		return &byteLevelPre{
			addPrefixSpace: c.AddPrefixSpace == nil || *c.AddPrefixSpace,
			useRegex:       c.UseRegex == nil || *c.UseRegex,
		}, nil
	case "Split":
		p, err := parsePattern(c.Pattern, "pre_tokenizer Split")
		if err != nil {
			return nil, err
		}
		if c.Behavior == nil {
			return nil, errJSON("pre_tokenizer Split: missing behavior")
		}
		b, ok := splitBehaviors[*c.Behavior]
		if !ok {
			return nil, errJSON("pre_tokenizer Split: unknown behavior %q", *c.Behavior)
		}
		p.behavior, p.invert = b, c.Invert
		return p, nil
	case "Digits":
		return &digitsPre{individual: c.IndividualDigits}, nil
	case "WhitespaceSplit":
		return whitespaceSplitPre{}, nil
	case "Metaspace":
		repl, scheme, err := metaspaceParams(c, "pre_tokenizer")
		if err != nil {
			return nil, err
		}
		return &metaspacePre{replacement: string(repl), scheme: scheme, split: c.Split == nil || *c.Split}, nil
	}
	return nil, errJSON("pre_tokenizer type %q is not supported (kvref supports Sequence, ByteLevel, Split, Digits, Metaspace, WhitespaceSplit)", c.Type)
}

// metaspaceParams reads Metaspace's replacement character and prepend
// scheme (or, in older files, add_prefix_space).
func metaspaceParams(c *hfComponent, what string) (rune, prependScheme, error) {
	if c.Replacement == nil || utf8.RuneCountInString(*c.Replacement) != 1 {
		return 0, 0, errJSON("%s Metaspace: replacement must be one character", what)
	}
	repl, _ := utf8.DecodeRuneInString(*c.Replacement)
	scheme := prependAlways
	if c.AddPrefixSpace != nil && !*c.AddPrefixSpace {
		scheme = prependNever
	}
	if c.PrependScheme != nil {
		switch *c.PrependScheme {
		case "always":
			scheme = prependAlways
		case "first":
			scheme = prependFirst
		case "never":
			scheme = prependNever
		default:
			return 0, 0, errJSON("%s Metaspace: unknown prepend_scheme %q", what, *c.PrependScheme)
		}
	}
	return repl, scheme, nil
}

// parseDecoder reads a decoder; null gives nil.
func parseDecoder(raw json.RawMessage, depth int) (decoder, error) {
	return parseComponent(raw, "decoder", depth, func(c *hfComponent) []json.RawMessage { return c.Decoders },
		func(parts []decoder) decoder { return decSequence(parts) }, decoderOf)
}

// decoderOf reads a decoder other than a Sequence.
func decoderOf(c *hfComponent) (decoder, error) {
	switch c.Type {
	case "ByteLevel":
		return byteLevelDec{}, nil
	case "Replace":
		p, content, err := replaceOf(c, "decoder Replace")
		if err != nil {
			return nil, err
		}
		return replaceDec{re: p.re, literal: p.literal, content: content}, nil
	case "ByteFallback":
		return byteFallbackDec{}, nil
	case "Fuse":
		return fuseDec{}, nil
	case "Strip":
		if c.Content == nil || utf8.RuneCountInString(*c.Content) != 1 {
			return nil, errJSON("decoder Strip: content must be one character")
		}
		r, _ := utf8.DecodeRuneInString(*c.Content)
		var start, stop int64
		if c.Start != nil {
			start = *c.Start
		}
		if c.Stop != nil {
			stop = *c.Stop
		}
		if start < 0 || stop < 0 || start > 1<<20 || stop > 1<<20 {
			return nil, errJSON("decoder Strip: start %d / stop %d out of range", start, stop)
		}
		return stripDec{content: r, start: int(start), stop: int(stop)}, nil
	case "Metaspace":
		repl, scheme, err := metaspaceParams(c, "decoder")
		if err != nil {
			return nil, err
		}
		return metaspaceDec{replacement: repl, scheme: scheme}, nil
	}
	return nil, errJSON("decoder type %q is not supported (kvref supports Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace)", c.Type)
}

// shorten cuts s to at most n runes, for error messages.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
