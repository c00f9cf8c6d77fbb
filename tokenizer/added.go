package tokenizer

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// addedToken is a token that is split out of the text before
// pre-tokenization: a special (control) token such as <|endoftext|>, or a
// user-defined one. Hugging Face calls both "added tokens".
type addedToken struct {
	content string
	id      int
	special bool // a control token: matched only when parsing special tokens, skipped by Decode
	lstrip  bool // swallows the whitespace on its left
	rstrip  bool // swallows the whitespace on its right
	// singleWord: matched only when not inside a word (Hugging Face).
	singleWord bool
	// normalized: matched against the normalized text rather than the
	// raw input (Hugging Face).
	normalized bool
}

// textFrag is a fragment of the input: raw text (id < 0) or an added token.
type textFrag struct {
	text  string
	id    int
	first bool // raw text that starts at the beginning of the input
}

// cSpace holds the bytes C's isspace accepts, which llama.cpp strips.
const cSpace = " \t\n\v\f\r"

// llamaPartition splits the added tokens out of text as llama.cpp's
// tokenizer_st_partition does: one token at a time, longest first, every
// occurrence left to right, with LSTRIP / RSTRIP dropping C isspace
// whitespace. Special tokens are only split out when parseSpecial is set;
// user-defined ones always are. byLength is sorted longest first.
func llamaPartition(text string, byLength []*addedToken, parseSpecial bool) []textFrag {
	if text == "" {
		return nil
	}
	frags := []textFrag{{text: text, id: -1, first: true}}
	for _, tok := range byLength {
		if tok.special && !parseSpecial {
			continue
		}
		out := frags[:0:0]
		for _, f := range frags {
			if f.id >= 0 || !strings.Contains(f.text, tok.content) {
				out = append(out, f)
				continue
			}
			t, first := f.text, f.first
			for {
				i := strings.Index(t, tok.content)
				if i < 0 {
					break
				}
				left := t[:i]
				if tok.lstrip {
					left = strings.TrimRight(left, cSpace)
				}
				if left != "" {
					out = append(out, textFrag{text: left, id: -1, first: first})
				}
				out = append(out, textFrag{id: tok.id})
				first = false
				t = t[i+len(tok.content):]
				if tok.rstrip {
					t = strings.TrimLeft(t, cSpace)
				}
			}
			if t != "" {
				out = append(out, textFrag{text: t, id: -1})
			}
		}
		frags = out
	}
	return frags
}

// sortByLength orders added tokens longest first, keeping the id order of
// tokens of equal length (llama.cpp's cache_special_tokens order).
func sortByLength(toks []*addedToken) {
	slices.SortStableFunc(toks, func(a, b *addedToken) int {
		if c := cmp.Compare(len(b.content), len(a.content)); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
}

// tokenTrie finds added tokens in text the way Hugging Face's Aho-Corasick
// automaton with MatchKind::LeftmostLongest does: the match that starts
// first, and of those the longest; then the search resumes after it.
type tokenTrie struct {
	nodes []trieNode
}

// trieNode is one node of a tokenTrie: its children sorted by byte, and
// the token that ends here, if any.
type trieNode struct {
	keys  []byte
	kids  []int32
	token *addedToken
}

// newTokenTrie builds a trie of the given tokens. A later token with the
// same content as an earlier one does not replace it.
func newTokenTrie(toks []*addedToken) *tokenTrie {
	t := &tokenTrie{nodes: make([]trieNode, 1)}
	for _, tok := range toks {
		if tok.content == "" {
			continue
		}
		n := int32(0)
		for i := 0; i < len(tok.content); i++ {
			c := tok.content[i]
			k, found := slices.BinarySearch(t.nodes[n].keys, c)
			if found {
				n = t.nodes[n].kids[k]
				continue
			}
			t.nodes = append(t.nodes, trieNode{})
			child := int32(len(t.nodes) - 1)
			nd := &t.nodes[n]
			nd.keys = slices.Insert(nd.keys, k, c)
			nd.kids = slices.Insert(nd.kids, k, child)
			n = child
		}
		if t.nodes[n].token == nil {
			t.nodes[n].token = tok
		}
	}
	return t
}

// longestAt returns the longest token that text[i:] starts with, or nil.
func (t *tokenTrie) longestAt(text string, i int) *addedToken {
	var best *addedToken
	n := int32(0)
	for j := i; j < len(text); j++ {
		nd := &t.nodes[n]
		k, found := slices.BinarySearch(nd.keys, text[j])
		if !found {
			break
		}
		n = nd.kids[k]
		if tok := t.nodes[n].token; tok != nil {
			best = tok
		}
	}
	return best
}

// hfPartition splits text at the added tokens in t as Hugging Face's
// AddedVocabulary::find_matches does. A special token found while
// parseSpecial is false stays text (as with split_special_tokens), as does a
// single_word token inside a word; either way the search resumes after it.
// lstrip / rstrip make the token swallow the Unicode whitespace beside it.
// first says whether text starts at the beginning of the input.
func hfPartition(text string, t *tokenTrie, parseSpecial, first bool, out []textFrag) []textFrag {
	if len(t.nodes) == 1 || len(t.nodes[0].keys) == 0 {
		if text != "" {
			out = append(out, textFrag{text: text, id: -1, first: first})
		}
		return out
	}
	startOffset := 0
	for i := 0; i < len(text); {
		tok := t.longestAt(text, i)
		if tok == nil {
			i++
			continue
		}
		start, stop := i, i+len(tok.content)
		i = stop
		if tok.special && !parseSpecial {
			continue
		}
		if tok.singleWord && (start > 0 && endsWithWord(text[:start]) || stop < len(text) && startsWithWord(text[stop:])) {
			continue
		}
		if tok.lstrip {
			start = max(len(strings.TrimRightFunc(text[:start], unicode.IsSpace)), startOffset)
		}
		if tok.rstrip {
			stop = len(text) - len(strings.TrimLeftFunc(text[stop:], unicode.IsSpace))
			i = stop
		}
		if startOffset < start {
			out = append(out, textFrag{text: text[startOffset:start], id: -1, first: first && startOffset == 0})
		}
		out = append(out, textFrag{id: tok.id})
		startOffset = stop
	}
	if startOffset < len(text) {
		out = append(out, textFrag{text: text[startOffset:], id: -1, first: first && startOffset == 0})
	}
	return out
}

// isWordChar approximates the regex crate's Unicode \w (Alphabetic, marks,
// decimal digits, connector punctuation, joiners), which Hugging Face uses
// to tell whether a single_word token touches a word.
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.M, unicode.Pc, unicode.Nl) ||
		r == 0x200C || r == 0x200D
}

// endsWithWord reports whether s ends with a word character.
func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return s != "" && isWordChar(r)
}

// startsWithWord reports whether s starts with a word character.
func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && isWordChar(r)
}
