package tokenizer

import "strings"

// fragment is a piece of the input: either raw text still to be tokenized
// (id < 0) or a special token already split out of the text.
type fragment struct {
	text string
	id   int
}

// partition splits the special tokens out of text, as llama.cpp's
// tokenizer_st_partition does: one special token at a time, longest first,
// every occurrence left to right. User-defined tokens are always split out;
// control and unknown tokens only when parseSpecial is set.
func (s *SPM) partition(text string, parseSpecial bool) []fragment {
	if text == "" {
		return nil
	}
	frags := []fragment{{text: text, id: -1}}
	for _, id := range s.special {
		if !parseSpecial && s.types[id] != TypeUserDefined {
			continue
		}
		tok := s.text[id]
		out := make([]fragment, 0, len(frags))
		for _, f := range frags {
			if f.id >= 0 || !strings.Contains(f.text, tok) {
				out = append(out, f)
				continue
			}
			out = s.split(out, f.text, id)
		}
		frags = out
	}
	return frags
}

// split appends to out the fragments of raw text t with every occurrence of
// special token id split out, honouring its LSTRIP / RSTRIP attributes.
func (s *SPM) split(out []fragment, t string, id int) []fragment {
	tok := s.text[id]
	lstrip := s.lstrip != nil && s.lstrip[id]
	rstrip := s.rstrip != nil && s.rstrip[id]
	for {
		i := strings.Index(t, tok)
		if i < 0 {
			break
		}
		left := t[:i]
		if lstrip {
			left = strings.TrimRight(left, cSpace)
		}
		if left != "" {
			out = append(out, fragment{text: left, id: -1})
		}
		out = append(out, fragment{id: id})
		t = t[i+len(tok):]
		if rstrip {
			t = strings.TrimLeft(t, cSpace)
		}
	}
	if t != "" {
		out = append(out, fragment{text: t, id: -1})
	}
	return out
}

// cSpace holds the bytes C's isspace accepts, which llama.cpp strips.
const cSpace = " \t\n\v\f\r"
