package tokenizer

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// Pre-tokenizer regexes are run with github.com/dlclark/regexp2, a
// backtracking engine ported from .NET, chosen on purpose over Go's regexp
// and over hand-written splitters:
//
//   - The patterns need look-ahead: GPT-2's `\s+(?!\S)` (leave the last
//     space of a run for the next word) is in almost every byte-level BPE
//     pre-tokenizer, and others use (?=...) as well. Go's regexp (RE2) has
//     no look-around, and rewriting `\s+(?!\S)` by hand for each pattern is
//     how llama.cpp ended up with special-cased splitters for two patterns
//     and std::regex for the rest.
//   - tokenizer.json files carry arbitrary Oniguruma patterns in their
//     Split pre-tokenizers; only a general engine can run them at all.
//   - The semantics the tokenizers rely on are the Perl/Oniguruma/.NET ones
//     that regexp2 has: leftmost alternative first, greedy quantifiers with
//     backtracking. (RE2 is also leftmost-first and would agree wherever it
//     can express the pattern.) Outside ECMAScript mode regexp2's \s is
//     Unicode White_Space (the same set as Oniguruma's and llama.cpp's),
//     \p{L}, \p{N}, \p{P}, ... use Go's Unicode tables, and (?i) uses simple
//     case folding as Oniguruma does. llama.cpp's own regexes spell
//     contractions as '[sS] instead of (?i:'s), so they keep llama.cpp's
//     ASCII-only meaning here too.
//   - regexp2's /v2 bounds each match's backtracking stack (see
//     maxBacktrack), so a hostile pattern fails a match instead of
//     exhausting memory, and FindRunesMatches reports matches without
//     allocating: the GPT-2 pattern splits 100 KB of English in about 3 ms.
//
// The remaining difference from llama.cpp is on purpose: its hand-written
// GPT-2 and Llama 3 splitters give unassigned code points a character class
// of their own, where the real regex (and so Hugging Face) treats them as
// "other" characters. kvref follows the regex.

// splitPiece is one piece of text on its way through the pre-tokenizer.
type splitPiece struct {
	text string
	// first is true for the piece that begins at the start of the input
	// (Metaspace's prepend_scheme "first" prepends only to that one).
	first bool
}

// preTokenizer splits pieces of normalized text into smaller pieces, the
// words that BPE then tokenizes one at a time. It may also rewrite them
// (ByteLevel maps bytes to its alphabet, Metaspace replaces spaces).
type preTokenizer interface {
	preTokenize(in []splitPiece) []splitPiece
}

// splitBehavior says what a split pre-tokenizer does with the delimiters it
// finds, as Hugging Face's SplitDelimiterBehavior.
type splitBehavior int

const (
	splitRemoved            splitBehavior = iota // drop them
	splitIsolated                                // keep each as a piece of its own
	splitMergedWithPrevious                      // append each to the piece before it
	splitMergedWithNext                          // prepend each to the piece after it
	splitContiguous                              // keep runs of them as one piece
)

// splitBehaviors maps Hugging Face's names to splitBehavior values.
var splitBehaviors = map[string]splitBehavior{
	"Removed":            splitRemoved,
	"Isolated":           splitIsolated,
	"MergedWithPrevious": splitMergedWithPrevious,
	"MergedWithNext":     splitMergedWithNext,
	"Contiguous":         splitContiguous,
}

// span is a byte range of a piece that is or is not a match of a pattern.
type span struct {
	start, end int
	match      bool
}

// compileRegex compiles a pre-tokenizer or normalizer regex. Patterns from
// tokenizer.json are Oniguruma patterns with Ruby syntax, where ^ and $
// always match at line boundaries: multiline says to do the same.
func compileRegex(pattern string, multiline bool) (re *regexp2.Regexp, err error) {
	const maxPattern = 64 << 10 // real pre-tokenizer patterns are < 1 KB
	if len(pattern) > maxPattern {
		return nil, fmt.Errorf("regex of %d bytes is longer than the %d kvref accepts", len(pattern), maxPattern)
	}
	if !utf8.ValidString(pattern) {
		return nil, errors.New("regex is not valid UTF-8")
	}
	opts := regexp2.None
	if multiline {
		opts = regexp2.Multiline
	}
	// The pattern may come from an untrusted file: a panic in the
	// third-party parser becomes an error.
	defer func() {
		if r := recover(); r != nil {
			re, err = nil, fmt.Errorf("regex rejected by the regex engine: %v", r)
		}
	}()
	return regexp2.Compile(pattern, opts, regexp2.OptionMaxBacktrackingStackSize(maxBacktrack))
}

// maxBacktrack bounds a match's backtracking stack, in slots of 8 bytes.
// regexp2's default (100,000) is too small for the look-ahead-heavy
// patterns (Tekken's, GPT-4o's) on words of tens of thousands of letters;
// 16M slots (128 MB) still stops a runaway pattern from taking the machine.
const maxBacktrack = 1 << 24

// regexSpans returns the matches of re in s and the gaps between them, in
// order, covering all of s (Hugging Face's Pattern::find_matches). A match
// error (the backtracking limit) ends the search: the rest is a gap.
func regexSpans(re *regexp2.Regexp, s string, out []span) (res []span) {
	if s == "" {
		return out
	}
	prev := 0
	defer func() {
		// A panic in the third-party engine (on a pattern from an
		// untrusted file) is treated like a match error.
		if r := recover(); r != nil {
			res = out
			if prev < len(s) {
				res = append(res, span{prev, len(s), false})
			}
		}
	}()
	runes := []rune(s)
	// Matches come in order, so one cursor turns rune indexes into byte offsets.
	ri, bi := 0, 0
	toByte := func(r int) int {
		for ri < r {
			bi += utf8.RuneLen(runes[ri])
			ri++
		}
		return bi
	}
	_ = re.FindRunesMatches(runes, 0, func(m regexp2.MatchView) bool {
		idx, n, _ := m.GroupRange(0)
		if idx < ri || n < 0 || idx+n > len(runes) {
			return false // not left to right (cannot happen with the options used)
		}
		start := toByte(idx)
		end := toByte(idx + n)
		if start > prev {
			out = append(out, span{prev, start, false})
		}
		out = append(out, span{start, end, true})
		prev = end
		return true
	})
	if prev < len(s) {
		out = append(out, span{prev, len(s), false})
	}
	return out
}

// literalSpans is regexSpans for a literal pattern: every non-overlapping
// occurrence, left to right. An empty pattern matches nothing.
func literalSpans(lit, s string, out []span) []span {
	if s == "" {
		return out
	}
	prev := 0
	for lit != "" {
		i := strings.Index(s[prev:], lit)
		if i < 0 {
			break
		}
		if i > 0 {
			out = append(out, span{prev, prev + i, false})
		}
		out = append(out, span{prev + i, prev + i + len(lit), true})
		prev += i + len(lit)
	}
	if prev < len(s) {
		out = append(out, span{prev, len(s), false})
	}
	return out
}

// runeSpans is regexSpans for a one-character predicate: each character for
// which it holds is a match of its own.
func runeSpans(pred func(rune) bool, s string, out []span) []span {
	prev := 0
	for i, r := range s {
		if pred(r) {
			if i > prev {
				out = append(out, span{prev, i, false})
			}
			n := utf8.RuneLen(r)
			if r == utf8.RuneError {
				_, n = utf8.DecodeRuneInString(s[i:])
			}
			out = append(out, span{i, i + n, true})
			prev = i + n
		}
	}
	if prev < len(s) {
		out = append(out, span{prev, len(s), false})
	}
	return out
}

// applyBehavior turns matches and gaps into the pieces to keep, as Hugging
// Face's NormalizedString::split does. invert swaps matches and gaps first.
func applyBehavior(spans []span, b splitBehavior, invert bool) []span {
	if invert {
		for i := range spans {
			spans[i].match = !spans[i].match
		}
	}
	var out []span
	prevMatch := false
	switch b {
	case splitRemoved:
		for _, s := range spans {
			if !s.match {
				out = append(out, s)
			}
		}
		return out
	case splitIsolated:
		return spans
	case splitContiguous:
		for _, s := range spans {
			if s.match == prevMatch && len(out) > 0 {
				out[len(out)-1].end = s.end
			} else {
				out = append(out, s)
			}
			prevMatch = s.match
		}
	case splitMergedWithPrevious:
		for _, s := range spans {
			if s.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].end = s.end
			} else {
				out = append(out, s)
			}
			prevMatch = s.match
		}
	case splitMergedWithNext:
		for i := len(spans) - 1; i >= 0; i-- {
			s := spans[i]
			if s.match && !prevMatch && len(out) > 0 {
				out[len(out)-1].start = s.start
			} else {
				out = append(out, s)
			}
			prevMatch = s.match
		}
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out
}

// splitWith splits every piece of in by the spans find returns, keeping
// what behavior b says. Empty pieces are dropped.
func splitWith(in []splitPiece, b splitBehavior, invert bool, find func(string, []span) []span) []splitPiece {
	out := make([]splitPiece, 0, len(in))
	var buf []span
	for _, p := range in {
		buf = find(p.text, buf[:0])
		for _, s := range applyBehavior(buf, b, invert) {
			if s.end > s.start {
				out = append(out, splitPiece{text: p.text[s.start:s.end], first: p.first && s.start == 0})
			}
		}
	}
	return out
}

// regexSplit is Hugging Face's Split pre-tokenizer, and each of llama.cpp's
// pre-tokenizer regexes (which behave as Split with Isolated).
type regexSplit struct {
	re       *regexp2.Regexp // nil for a literal pattern
	literal  string
	behavior splitBehavior
	invert   bool
}

func (r *regexSplit) preTokenize(in []splitPiece) []splitPiece {
	if r.re == nil {
		return splitWith(in, r.behavior, r.invert, func(s string, out []span) []span { return literalSpans(r.literal, s, out) })
	}
	return splitWith(in, r.behavior, r.invert, func(s string, out []span) []span { return regexSpans(r.re, s, out) })
}

// gpt2Pattern is the pre-tokenizer regex of GPT-2, which Hugging Face's
// ByteLevel pre-tokenizer applies when use_regex is true.
const gpt2Pattern = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`

// gpt2Regex is gpt2Pattern, compiled once.
var gpt2Regex = regexp2.MustCompile(gpt2Pattern, regexp2.None)

// byteLevelPre is Hugging Face's ByteLevel pre-tokenizer: optionally
// prepend a space, optionally split with the GPT-2 regex, then write every
// byte as its byte-level character.
type byteLevelPre struct {
	addPrefixSpace bool
	useRegex       bool
}

func (b *byteLevelPre) preTokenize(in []splitPiece) []splitPiece {
	if b.addPrefixSpace {
		for i := range in {
			if !strings.HasPrefix(in[i].text, " ") {
				in[i].text = " " + in[i].text
			}
		}
	}
	if b.useRegex {
		in = splitWith(in, splitIsolated, false, func(s string, out []span) []span { return regexSpans(gpt2Regex, s, out) })
	}
	for i := range in {
		in[i].text = byteEncode(in[i].text)
	}
	return in
}

// digitsPre is Hugging Face's Digits pre-tokenizer: numeric characters
// become pieces of their own (individual) or runs of them do.
type digitsPre struct{ individual bool }

func (d *digitsPre) preTokenize(in []splitPiece) []splitPiece {
	b := splitContiguous
	if d.individual {
		b = splitIsolated
	}
	return splitWith(in, b, false, func(s string, out []span) []span { return runeSpans(isNumeric, s, out) })
}

// isNumeric is Rust's char::is_numeric: general categories Nd, Nl and No.
func isNumeric(r rune) bool { return unicode.In(r, unicode.N) }

// whitespaceSplitPre is Hugging Face's WhitespaceSplit: split on Unicode
// whitespace, which is dropped.
type whitespaceSplitPre struct{}

func (whitespaceSplitPre) preTokenize(in []splitPiece) []splitPiece {
	return splitWith(in, splitRemoved, false, func(s string, out []span) []span { return runeSpans(unicode.IsSpace, s, out) })
}

// prependScheme says where Metaspace puts its replacement character.
type prependScheme int

const (
	prependAlways prependScheme = iota // before every piece
	prependFirst                       // before the piece at the start of the input only
	prependNever                       // nowhere
)

// metaspacePre is Hugging Face's Metaspace pre-tokenizer (SentencePiece
// style): spaces become the replacement character ("▁"), which is also
// prepended as the scheme says; with split, each "▁" starts a new piece.
type metaspacePre struct {
	replacement string
	scheme      prependScheme
	split       bool
}

func (m *metaspacePre) preTokenize(in []splitPiece) []splitPiece {
	for i := range in {
		t := strings.ReplaceAll(in[i].text, " ", m.replacement)
		if !strings.HasPrefix(t, m.replacement) &&
			(m.scheme == prependAlways || m.scheme == prependFirst && in[i].first) {
			t = m.replacement + t
		}
		in[i].text = t
	}
	if !m.split {
		return in
	}
	return splitWith(in, splitMergedWithNext, false, func(s string, out []span) []span { return literalSpans(m.replacement, s, out) })
}

// preSequence runs pre-tokenizers one after the other.
type preSequence []preTokenizer

func (s preSequence) preTokenize(in []splitPiece) []splitPiece {
	for _, p := range s {
		in = p.preTokenize(in)
	}
	return in
}
