package tokenizer

import (
	"fmt"
	"slices"
	"strconv"
)

// SPM is the SentencePiece-style BPE tokenizer llama.cpp uses for GGUF
// vocabularies with tokenizer.ggml.model = "llama" (llm_tokenizer_spm).
// It is safe for concurrent use.
type SPM struct {
	vocabCore
	scores []float32      // merge priority by id
	lstrip []bool         // nil or per-id LSTRIP flag
	rstrip []bool         // nil or per-id RSTRIP flag
	ids    map[string]int // token text -> id, every token type included
	pieces [][]byte       // Piece(id), precomputed

	byteIDs [256]int // id of the token for each byte (<0xNN>, else the 1-byte text), -1 if none

	// byLength holds the control, user-defined and unknown tokens, longest
	// text first: the order in which llama.cpp splits them out of the input.
	byLength []*addedToken

	addBOS, addEOS bool
	addSpacePrefix bool
}

var _ Tokenizer = (*SPM)(nil)

// NewSPM builds an SPM tokenizer from v. It checks that the slices have equal
// lengths, that the special ids are in range and that byte tokens are
// well formed, and returns a descriptive error otherwise. v is copied.
func NewSPM(v Vocab) (*SPM, error) {
	if err := v.validate(); err != nil {
		return nil, err
	}
	n := len(v.Tokens)
	s := &SPM{
		vocabCore: vocabCore{
			text: make([]string, n), types: slices.Clone(v.Types), eog: make(map[int]bool),
			bos: v.BOS, eos: v.EOS, unk: v.UNK, pad: v.PAD, eot: v.EOT,
		},
		scores:         slices.Clone(v.Scores),
		lstrip:         slices.Clone(v.LStrip),
		rstrip:         slices.Clone(v.RStrip),
		ids:            make(map[string]int, n),
		addBOS:         v.AddBOS,
		addEOS:         v.AddEOS,
		addSpacePrefix: v.AddSpacePrefix,
	}
	for id, t := range v.Tokens {
		if t == "" {
			// llama.cpp renames empty tokens so that they stay unique.
			t = "[EMPTY_" + strconv.Itoa(id) + "]"
		}
		if prev, dup := s.ids[t]; dup {
			return nil, fmt.Errorf("tokenizer: token %q appears twice, as ids %d and %d", t, prev, id)
		}
		s.ids[t] = id
		s.text[id] = t
	}
	for b := range 256 {
		s.byteIDs[b] = -1
		if id, ok := s.ids[byteTokenText(byte(b))]; ok {
			s.byteIDs[b] = id
		} else if id, ok := s.ids[string([]byte{byte(b)})]; ok {
			s.byteIDs[b] = id
		}
	}
	for id, t := range s.types {
		if t == TypeControl || t == TypeUserDefined || t == TypeUnknown {
			s.byLength = append(s.byLength, &addedToken{
				content: s.text[id],
				id:      id,
				special: t != TypeUserDefined,
				lstrip:  v.LStrip != nil && v.LStrip[id],
				rstrip:  v.RStrip != nil && v.RStrip[id],
			})
		}
	}
	sortByLength(s.byLength)
	for _, id := range append([]int{v.EOS, v.EOT}, v.EOG...) {
		if id >= 0 {
			s.eog[id] = true
		}
	}
	s.pieces = make([][]byte, n)
	for id := range n {
		s.pieces[id] = s.piece(id)
	}
	return s, nil
}

// AddBOS reports whether Encode with addSpecial prepends BOS.
func (s *SPM) AddBOS() bool { return s.addBOS }

// AddEOS reports whether Encode with addSpecial appends EOS.
func (s *SPM) AddEOS() bool { return s.addEOS }
