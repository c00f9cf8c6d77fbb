package tokenizer

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// The llama2.c tokenizer.bin format (run.c's build_tokenizer), little-endian:
//
//	max_token_length int32
//	then, for each of the model's vocab_size tokens:
//	    score float32 | length int32 | length bytes of token text
//
// The file does not say how many tokens it holds: the model's header does.

// FromLlama2cFile reads a llama2.c tokenizer.bin and builds its SentencePiece
// tokenizer; see FromLlama2c. vocabSize is the model's vocab_size (0: every
// token up to the end of the file).
func FromLlama2cFile(path string, vocabSize int) (Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return fromLlama2c(path, data, vocabSize)
}

// FromLlama2c parses the bytes of a llama2.c tokenizer.bin holding vocabSize
// tokens (0: as many as the data holds) and returns an *SPM. The file carries
// only texts and scores, so the rest is llama2.c's convention: ids 0, 1, 2 are
// <unk> (unknown), <s> (control, BOS) and </s> (control, EOS); tokens of the
// form <0xNN> are byte tokens; all others are normal. Encode adds BOS and a
// leading space, as run.c's encode does. The data is untrusted: every length
// is checked against the bytes that remain before anything is allocated, and
// bytes left over after the last token are an error.
func FromLlama2c(data []byte, vocabSize int) (Tokenizer, error) {
	return fromLlama2c("tokenizer.bin", data, vocabSize)
}

// fromLlama2c is FromLlama2c with the name used in error messages.
func fromLlama2c(name string, data []byte, vocabSize int) (Tokenizer, error) {
	v, err := llama2cVocab(name, data, vocabSize)
	if err != nil {
		return nil, err
	}
	s, err := NewSPM(v)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, name)
	}
	return s, nil
}

// llama2cVocab decodes tokenizer.bin into a Vocab with llama2.c's conventions.
func llama2cVocab(name string, data []byte, vocabSize int) (Vocab, error) {
	const maxVocab = 1 << 24 // the model package's limit on vocabulary size
	if vocabSize < 0 || vocabSize > maxVocab {
		return Vocab{}, fmt.Errorf("tokenizer: %s: vocabulary size %d is out of range [0, %d]", name, vocabSize, maxVocab)
	}
	if len(data) < 4 {
		return Vocab{}, fmt.Errorf("tokenizer: %s: file is %d bytes, too short for the 4-byte max_token_length header of a llama2.c tokenizer.bin",
			name, len(data))
	}
	maxLen := int64(int32(binary.LittleEndian.Uint32(data)))
	if maxLen < 1 {
		return Vocab{}, fmt.Errorf("tokenizer: %s: max_token_length is %d, want ≥ 1", name, maxLen)
	}
	// Every token takes at least 8 bytes (score and length), which bounds the
	// allocations below by the size of the file.
	rest := data[4:]
	capacity := vocabSize
	if vocabSize == 0 {
		capacity = len(rest) / 8
	}
	capacity = min(capacity, len(rest)/8)
	v := Vocab{
		Tokens: make([]string, 0, capacity),
		Scores: make([]float32, 0, capacity),
		BOS:    -1, EOS: -1, UNK: -1, PAD: -1, EOT: -1,
		AddSpacePrefix: true,
	}
	for id := 0; vocabSize == 0 && len(rest) > 0 || id < vocabSize; id++ {
		off := len(data) - len(rest)
		if len(rest) < 8 {
			return Vocab{}, fmt.Errorf("tokenizer: %s: token %d at offset %d needs 8 bytes for its score and length, file has %d left: %w",
				name, id, off, len(rest), errLlama2cTruncated)
		}
		score := math.Float32frombits(binary.LittleEndian.Uint32(rest))
		n := int64(int32(binary.LittleEndian.Uint32(rest[4:])))
		rest = rest[8:]
		switch {
		case math.IsNaN(float64(score)):
			return Vocab{}, fmt.Errorf("tokenizer: %s: token %d at offset %d has score NaN, want a number", name, id, off)
		case n < 0 || n > maxLen:
			return Vocab{}, fmt.Errorf("tokenizer: %s: token %d at offset %d has length %d, want 0..%d (max_token_length)",
				name, id, off, n, maxLen)
		case n > int64(len(rest)):
			return Vocab{}, fmt.Errorf("tokenizer: %s: token %d at offset %d has length %d, file has %d bytes left: %w",
				name, id, off, n, len(rest), errLlama2cTruncated)
		}
		v.Tokens = append(v.Tokens, string(rest[:n]))
		v.Scores = append(v.Scores, score)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		return Vocab{}, fmt.Errorf("tokenizer: %s: %d bytes left after the %d tokens of the model's vocabulary; is this the tokenizer of another model?",
			name, len(rest), len(v.Tokens))
	}
	if len(v.Tokens) == 0 {
		return Vocab{}, fmt.Errorf("tokenizer: %s: the file holds no tokens", name)
	}

	fromLlama2cTexts(v.Tokens)
	v.Types = make([]int32, len(v.Tokens))
	for id, t := range v.Tokens {
		v.Types[id] = TypeNormal
		if _, ok := parseByteToken(t); ok {
			v.Types[id] = TypeByte
		}
	}
	for id, p := range []struct {
		dst *int
		typ int32
	}{{&v.UNK, TypeUnknown}, {&v.BOS, TypeControl}, {&v.EOS, TypeControl}} {
		if id < len(v.Tokens) {
			*p.dst = id
			v.Types[id] = p.typ
		}
	}
	v.AddBOS = v.BOS >= 0
	detectEOG(&v, -1, [3]int{-1, -1, -1})
	return v, nil
}

// fromLlama2cTexts turns the token texts of a tokenizer.bin back into
// SentencePiece pieces. llama2.c's exporter replaced "▁" by a space in every
// piece (SentencePiece pieces never hold a real space), so spaces become "▁"
// again. Later versions of the exporter also wrote BOS and EOS as "\n<s>\n" and
// "\n</s>\n" and the 256 byte-fallback pieces <0xNN> (ids 3..258) as the
// UTF-8 encoding of the code point NN; both are recognised and restored.
func fromLlama2cTexts(tokens []string) {
	if len(tokens) >= 3+256 {
		rawBytes := true
		for b := range 256 {
			if tokens[3+b] != string(rune(b)) {
				rawBytes = false
				break
			}
		}
		if rawBytes {
			for b := range 256 {
				tokens[3+b] = byteTokenText(byte(b))
			}
		}
	}
	for id, t := range tokens {
		switch {
		case id == 1 && t == "\n<s>\n":
			tokens[id] = "<s>"
		case id == 2 && t == "\n</s>\n":
			tokens[id] = "</s>"
		default:
			tokens[id] = strings.ReplaceAll(t, " ", "▁")
		}
	}
}

// errLlama2cTruncated is wrapped by errors about a tokenizer.bin that ends early.
var errLlama2cTruncated = errors.New("the file is truncated or not a llama2.c tokenizer.bin")

// WriteLlama2c writes tokens and their scores in the llama2.c tokenizer.bin
// format as llama2.c's original exporter did: "▁" written as a space, byte
// tokens as <0xNN>, max_token_length the longest token's byte length. Only
// v.Tokens and v.Scores are stored; FromLlama2c reconstructs the rest by
// llama2.c's conventions. Tokens holding a real space cannot be stored.
//
// llama2.c's own run.c asks more of the vocabulary than the format does: it
// reads each token with fread(text, len, 1), which fails for an empty token,
// and its encoder looks up " " (the "▁" piece) for the dummy prefix of every
// prompt, reading vocab[-1] when there is none. kvref writes such vocabularies
// (its reader accepts them), but run.c cannot use them.
func WriteLlama2c(w io.Writer, v Vocab) error {
	if len(v.Tokens) == 0 {
		return fmt.Errorf("tokenizer: writing tokenizer.bin: the vocabulary has no tokens")
	}
	if len(v.Scores) != len(v.Tokens) {
		return fmt.Errorf("tokenizer: writing tokenizer.bin: %d tokens but %d scores", len(v.Tokens), len(v.Scores))
	}
	texts := make([]string, len(v.Tokens))
	maxLen := 1
	for id, t := range v.Tokens {
		if strings.Contains(t, " ") {
			return fmt.Errorf("tokenizer: writing tokenizer.bin: token %d (%q) contains a space, which the format reserves for \"▁\"", id, t)
		}
		texts[id] = strings.ReplaceAll(t, "▁", " ")
		if len(texts[id]) > math.MaxInt32 {
			return fmt.Errorf("tokenizer: writing tokenizer.bin: token %d is %d bytes long", id, len(t))
		}
		maxLen = max(maxLen, len(texts[id]))
	}
	bw := bufio.NewWriter(w)
	var buf [8]byte
	binary.LittleEndian.PutUint32(buf[:], uint32(maxLen))
	bw.Write(buf[:4])
	for id, t := range texts {
		binary.LittleEndian.PutUint32(buf[:], math.Float32bits(v.Scores[id]))
		binary.LittleEndian.PutUint32(buf[4:], uint32(len(t)))
		bw.Write(buf[:])
		bw.WriteString(t)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("tokenizer: writing tokenizer.bin: %w", err)
	}
	return nil
}
