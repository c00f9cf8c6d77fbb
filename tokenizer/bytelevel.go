package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// GPT-2's byte-level alphabet. Byte-level BPE vocabularies do not store raw
// bytes: every byte b is written as one printable character, byteChar[b].
// The 188 bytes that are already printable and not a space ('!'..'~',
// '¡'..'¬', '®'..'ÿ') stand for themselves; the other 68 (control
// characters, space, DEL, NBSP, soft hyphen, ...) are shifted to U+0100
// upwards in byte order, so ' ' becomes 'Ġ' (U+0120) and '\n' becomes 'Ċ'
// (U+010A). This is bytes_to_unicode() of OpenAI's encoder.py, which
// llama.cpp (unicode_byte_to_utf8) and Hugging Face (BYTES_CHAR) copy.
var (
	byteChar    [256]rune    // byte -> its character
	byteCharStr [256]string  // byte -> its character, UTF-8 encoded
	charByteTab [0x144]int16 // character -> its byte (the inverse), -1 outside the alphabet
)

func init() {
	for i := range charByteTab {
		charByteTab[i] = -1
	}
	n := rune(0)
	for b := range 256 {
		r := rune(b)
		printable := ('!' <= b && b <= '~') || (0xA1 <= b && b <= 0xAC) || (0xAE <= b && b <= 0xFF)
		if !printable {
			r = 256 + n
			n++
		}
		byteChar[b] = r
		byteCharStr[b] = string(r)
		charByteTab[r] = int16(b)
	}
}

// byteEncode returns s with every byte replaced by its byte-level character.
func byteEncode(s string) string {
	var b strings.Builder
	b.Grow(2 * len(s))
	for i := 0; i < len(s); i++ {
		b.WriteString(byteCharStr[s[i]])
	}
	return b.String()
}

// byteDecode maps the byte-level characters of s back to their bytes. A
// character outside the alphabet makes it give up: ok is false (Hugging
// Face's ByteLevel decoder then keeps the token's UTF-8 text as it is).
func byteDecode(s string, out []byte) (_ []byte, ok bool) {
	start := len(out)
	for _, r := range s {
		if r < 0 || int(r) >= len(charByteTab) || charByteTab[r] < 0 {
			return out[:start], false
		}
		out = append(out, byte(charByteTab[r]))
	}
	return out, true
}

// byteDecodeLoose maps s back to bytes character by character, keeping the
// UTF-8 bytes of any character outside the alphabet as they are. Used for
// pieces of vocabularies that contain such characters by mistake.
func byteDecodeLoose(s string, out []byte) []byte {
	for _, r := range s {
		if r >= 0 && int(r) < len(charByteTab) && charByteTab[r] >= 0 {
			out = append(out, byte(charByteTab[r]))
			continue
		}
		out = utf8.AppendRune(out, r)
	}
	return out
}

// validUTF8 returns s with each byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, one replacement per byte (as llama.cpp's
// unicode_cpts_from_utf8 and Go's range loop do). Valid input is returned
// unchanged.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// lossyUTF8 converts bytes to a string the way Rust's
// String::from_utf8_lossy does, which is what Hugging Face's decoders use:
// every maximal prefix of a would-be valid sequence that cannot be completed
// becomes a single U+FFFD ("E2 82 41" gives "\uFFFDA", not two replacements).
func lossyUTF8(p []byte) string {
	if utf8.Valid(p) {
		return string(p)
	}
	var b strings.Builder
	b.Grow(len(p) + 8)
	for i := 0; i < len(p); {
		if r, n := utf8.DecodeRune(p[i:]); r != utf8.RuneError || n > 1 {
			b.Write(p[i : i+n])
			i += n
			continue
		}
		b.WriteRune(utf8.RuneError)
		i += invalidPrefixLen(p[i:])
	}
	return b.String()
}

// invalidPrefixLen returns the length of the maximal subpart of an
// ill-formed UTF-8 sequence at the start of p (Unicode Standard, chapter 3,
// "U+FFFD Substitution of Maximal Subparts"): the lead byte plus every
// following byte that still fits a well-formed sequence. It is at least 1.
func invalidPrefixLen(p []byte) int {
	c := p[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF) // allowed range of the second byte
	switch {
	case 0xC2 <= c && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case 0xE1 <= c && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case 0xF1 <= c && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(p); k++ {
		b := p[n]
		if k == 0 && (b < lo || b > hi) || k > 0 && (b < 0x80 || b > 0xBF) {
			break
		}
		n++
	}
	return n
}
