package tokenizer

import (
	"strings"
	"unicode"

	"github.com/dlclark/regexp2/v2"
	"golang.org/x/text/unicode/norm"
)

// normalizer rewrites raw text before pre-tokenization, as Hugging Face's
// normalizers do (Llama 2's Prepend("▁") + Replace(" ", "▁"), Qwen2's
// NFC, ...). It is applied to each stretch of text between added tokens.
type normalizer interface {
	normalize(s string) string
}

// unicodeNorm is one of the NFC, NFD, NFKC and NFKD normalizers.
type unicodeNorm struct{ form norm.Form }

func (n unicodeNorm) normalize(s string) string { return n.form.String(s) }

// lowercaseNorm is Hugging Face's Lowercase: Rust's char::to_lowercase on
// every character (no context rules; U+0130 becomes "i\u0307").
type lowercaseNorm struct{}

func (lowercaseNorm) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 'İ' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// stripNorm is Hugging Face's Strip: trim Unicode whitespace on the left
// and/or the right.
type stripNorm struct{ left, right bool }

func (n stripNorm) normalize(s string) string {
	if n.left {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	if n.right {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s
}

// stripAccentsNorm is Hugging Face's StripAccents: drop combining marks
// (general category M: Mn, Mc and Me).
type stripAccentsNorm struct{}

func (stripAccentsNorm) normalize(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.M, r) {
			return -1
		}
		return r
	}, s)
}

// prependNorm is Hugging Face's Prepend: add a prefix to non-empty text.
type prependNorm struct{ prefix string }

func (n prependNorm) normalize(s string) string {
	if s == "" {
		return s
	}
	return n.prefix + s
}

// replaceNorm is Hugging Face's Replace: every match of a literal or a
// regex becomes content (taken literally).
type replaceNorm struct {
	re      *regexp2.Regexp // nil for a literal pattern
	literal string
	content string
}

func (n replaceNorm) normalize(s string) string {
	if n.re == nil {
		if n.literal == "" {
			return s
		}
		return strings.ReplaceAll(s, n.literal, n.content)
	}
	return replaceSpans(s, regexSpans(n.re, s, nil), n.content)
}

// replaceSpans rebuilds s with every match span replaced by content.
func replaceSpans(s string, spans []span, content string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, sp := range spans {
		if sp.match {
			b.WriteString(content)
		} else {
			b.WriteString(s[sp.start:sp.end])
		}
	}
	return b.String()
}

// normSequence runs normalizers one after the other.
type normSequence []normalizer

func (q normSequence) normalize(s string) string {
	for _, n := range q {
		s = n.normalize(s)
	}
	return s
}
