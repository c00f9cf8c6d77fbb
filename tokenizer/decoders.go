package tokenizer

import (
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// decoder turns token strings back into text, as Hugging Face's decoders
// do. decodeChain is Decoder::decode_chain: token strings in, token strings
// out (the final text is their concatenation). piece is what one token
// contributes in the middle of a stream: the per-token part of the decoder
// with nothing positional (no stripping at the start) and no UTF-8 repair,
// so its result may be a partial UTF-8 sequence.
type decoder interface {
	decodeChain(toks []string) []string
	piece(tok string) string
}

// byteLevelDec is the ByteLevel decoder: byte-level characters back to
// bytes, the whole output repaired to UTF-8 as Rust's from_utf8_lossy does.
// A token with a character outside the alphabet keeps its UTF-8 text.
type byteLevelDec struct{}

func (byteLevelDec) decodeChain(toks []string) []string {
	var buf []byte
	for _, t := range toks {
		var ok bool
		if buf, ok = byteDecode(t, buf); !ok {
			buf = append(buf, t...)
		}
	}
	return []string{lossyUTF8(buf)}
}

func (byteLevelDec) piece(tok string) string {
	if b, ok := byteDecode(tok, nil); ok {
		return string(b)
	}
	return tok
}

// replaceDec is the Replace decoder: every match in every token becomes
// content.
type replaceDec struct {
	re      *regexp2.Regexp // nil for a literal pattern
	literal string
	content string
}

func (d replaceDec) decodeChain(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = d.piece(t)
	}
	return out
}

func (d replaceDec) piece(tok string) string {
	return replaceNorm(d).normalize(tok)
}

// byteFallbackDec is the ByteFallback decoder: runs of <0xNN> tokens are
// joined into their bytes; a run that is not valid UTF-8 becomes one U+FFFD
// per byte.
type byteFallbackDec struct{}

func (byteFallbackDec) decodeChain(toks []string) []string {
	out := make([]string, 0, len(toks))
	var run []byte
	flush := func() {
		if len(run) == 0 {
			return
		}
		if utf8.Valid(run) {
			out = append(out, string(run))
		} else {
			for range run {
				out = append(out, "\uFFFD")
			}
		}
		run = run[:0]
	}
	for _, t := range toks {
		if b, ok := parseRustByteToken(t); ok {
			run = append(run, b)
			continue
		}
		flush()
		out = append(out, t)
	}
	flush()
	return out
}

func (byteFallbackDec) piece(tok string) string {
	if b, ok := parseRustByteToken(tok); ok {
		return string([]byte{b})
	}
	return tok
}

// parseRustByteToken parses "<0xNN>" as Hugging Face's ByteFallback does:
// six bytes, and the two in the middle parsed by u8::from_str_radix(_, 16),
// which also accepts a leading '+'.
func parseRustByteToken(t string) (byte, bool) {
	if len(t) != 6 || t[:3] != "<0x" || t[5] != '>' {
		return 0, false
	}
	h := t[3:5]
	val := 0
	digits := h
	if h[0] == '+' {
		digits = h[1:]
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		var d int
		switch {
		case '0' <= c && c <= '9':
			d = int(c - '0')
		case 'a' <= c && c <= 'f':
			d = int(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = int(c-'A') + 10
		default:
			return 0, false
		}
		val = val*16 + d
	}
	return byte(val), true
}

// fuseDec is the Fuse decoder: all tokens become one.
type fuseDec struct{}

func (fuseDec) decodeChain(toks []string) []string { return []string{strings.Join(toks, "")} }

func (fuseDec) piece(tok string) string { return tok }

// stripDec is the Strip decoder: up to start leading and stop trailing
// copies of content are removed from every token.
type stripDec struct {
	content     rune
	start, stop int
}

func (d stripDec) decodeChain(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		chars := []rune(t)
		lo := 0
		for lo < len(chars) && lo < d.start && chars[lo] == d.content {
			lo++
		}
		hi := len(chars)
		for k := 0; k < d.stop && hi > lo && chars[hi-1] == d.content; k++ {
			hi--
		}
		out[i] = string(chars[lo:hi])
	}
	return out
}

// piece keeps the token as it is: in the middle of a stream the (fused)
// text does not start here.
func (stripDec) piece(tok string) string { return tok }

// metaspaceDec is the Metaspace decoder: the replacement character becomes
// a space, except in the first token, where it is dropped unless the
// prepend scheme is "never".
type metaspaceDec struct {
	replacement rune
	scheme      prependScheme
}

func (d metaspaceDec) decodeChain(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		var b strings.Builder
		for _, r := range t {
			switch {
			case r != d.replacement:
				b.WriteRune(r)
			case i > 0 || d.scheme == prependNever:
				b.WriteByte(' ')
			}
		}
		out[i] = b.String()
	}
	return out
}

func (d metaspaceDec) piece(tok string) string {
	return strings.ReplaceAll(tok, string(d.replacement), " ")
}

// decSequence runs decoders one after the other.
type decSequence []decoder

func (q decSequence) decodeChain(toks []string) []string {
	for _, d := range q {
		toks = d.decodeChain(toks)
	}
	return toks
}

func (q decSequence) piece(tok string) string {
	for _, d := range q {
		tok = d.piece(tok)
	}
	return tok
}
