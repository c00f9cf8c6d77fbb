package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/tokenizer"
)

// runcTokenizer reads tokenizer.bin exactly as llama2.c's run.c does (build_tokenizer) and
// encodes as its encode does, reporting as errors what makes run.c fail or read out of
// bounds: a short read, a zero-length token (fread of 0 bytes returns 0: "failed read"), a
// missing space piece (encode's dummy prefix becomes vocab[-1]), a byte fallback id beyond
// the vocabulary, a merge candidate longer than its str_buffer of max_token_length·2+3.
type runcTokenizer struct {
	vocab  []string
	scores []float32
	maxLen int
	sorted []int // ids in strcmp order of their texts, for str_lookup's bsearch
}

func readRunc(data []byte, vocabSize int) (*runcTokenizer, error) {
	r := bytes.NewReader(data)
	var maxLen int32
	if err := binary.Read(r, binary.LittleEndian, &maxLen); err != nil {
		return nil, fmt.Errorf("max_token_length: failed read")
	}
	t := &runcTokenizer{maxLen: int(maxLen)}
	for i := range vocabSize {
		var score float32
		var n int32
		if binary.Read(r, binary.LittleEndian, &score) != nil || binary.Read(r, binary.LittleEndian, &n) != nil {
			return nil, fmt.Errorf("token %d: failed read", i)
		}
		if n <= 0 || int64(n) > int64(r.Len()) { // fread(vocab[i], len, 1, file) != 1
			return nil, fmt.Errorf("token %d: fread of %d bytes fails: failed read", i, n)
		}
		text := make([]byte, n)
		r.Read(text)
		t.vocab = append(t.vocab, string(text))
		t.scores = append(t.scores, score)
	}
	t.sorted = make([]int, vocabSize)
	for i := range t.sorted {
		t.sorted[i] = i
	}
	sort.SliceStable(t.sorted, func(a, b int) bool { return t.vocab[t.sorted[a]] < t.vocab[t.sorted[b]] })
	return t, nil
}

func (t *runcTokenizer) lookup(s string) int {
	i := sort.Search(len(t.sorted), func(i int) bool { return t.vocab[t.sorted[i]] >= s })
	if i < len(t.sorted) && t.vocab[t.sorted[i]] == s {
		return t.sorted[i]
	}
	return -1
}

// encode is run.c's encode(t, text, bos=1, eos=0).
func (t *runcTokenizer) encode(text string) ([]int, error) {
	buf := t.maxLen*2 + 1 + 2
	tokens := []int{1}
	if text != "" {
		id := t.lookup(" ")
		if id < 0 {
			return nil, fmt.Errorf(`the vocabulary has no " " piece: the dummy prefix is -1 and the merge loop reads vocab[-1]`)
		}
		tokens = append(tokens, id)
	}
	for i := 0; i < len(text); {
		n := 1
		for i+n < len(text) && text[i+n]&0xC0 == 0x80 && n < 4 {
			n++
		}
		if id := t.lookup(text[i : i+n]); id >= 0 {
			tokens = append(tokens, id)
		} else {
			for _, b := range []byte(text[i : i+n]) {
				if int(b)+3 >= len(t.vocab) {
					return nil, fmt.Errorf("byte fallback id %d is outside the vocabulary", int(b)+3)
				}
				tokens = append(tokens, int(b)+3)
			}
		}
		i += n
	}
	for {
		best, bestID, bestIdx := float32(-1e10), -1, -1
		for i := 0; i+1 < len(tokens); i++ {
			pair := t.vocab[tokens[i]] + t.vocab[tokens[i+1]]
			if len(pair)+1 > buf {
				return nil, fmt.Errorf("merge candidate %q overflows str_buffer (%d bytes)", pair, buf)
			}
			if id := t.lookup(pair); id >= 0 && t.scores[id] > best {
				best, bestID, bestIdx = t.scores[id], id, i
			}
		}
		if bestIdx < 0 {
			return tokens, nil
		}
		tokens[bestIdx] = bestID
		tokens = append(tokens[:bestIdx+1], tokens[bestIdx+2:]...)
	}
}

// checkpointVocab reads vocab_size from a llama2.c checkpoint header (7 int32s; negative
// for an unshared classifier).
func checkpointVocab(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	v := int32(binary.LittleEndian.Uint32(data[5*4:]))
	return int(math.Abs(float64(v)))
}

// TestSynthLlama2cTokenizerRunsInRunC: the tokenizer.bin that kvref synth writes for a
// llama2.c checkpoint, with the default and with a 32000-token vocabulary, reads and encodes
// the way llama2.c's run.c reads and encodes it, and the checkpoint runs in kvref.
func TestSynthLlama2cTokenizerRunsInRunC(t *testing.T) {
	prompts := []string{"Once upon a time, there was a little girl.", "héllo wörld ✓", "x", " lead and  double  spaces "}
	for _, vocab := range []string{"0", "32000"} {
		t.Run("vocab "+vocab, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "model.bin")
			_, stderr, code := kvref(t, "synth", "--format", "llama2c", "--vocab", vocab, "--dim", "32", "--heads", "4", "--kv-heads", "4",
				"--layers", "1", "--hidden", "32", "--ctx", "64", "-o", bin)
			require.Equal(t, 0, code, stderr)
			data, err := os.ReadFile(filepath.Join(dir, "tokenizer.bin"))
			require.NoError(t, err)
			n := checkpointVocab(t, bin)
			rt, err := readRunc(data, n)
			require.NoError(t, err)
			for _, tok := range rt.vocab {
				require.LessOrEqual(t, len(tok), rt.maxLen, "max_token_length bounds every token")
			}
			for _, p := range prompts {
				ids, err := rt.encode(p)
				require.NoError(t, err, p)
				var text strings.Builder
				for _, id := range ids[1:] { // run.c's decode: byte tokens are <0xNN>
					var b byte
					if _, err := fmt.Sscanf(rt.vocab[id], "<0x%02X>", &b); err == nil && strings.HasPrefix(rt.vocab[id], "<0x") {
						text.WriteByte(b)
					} else {
						text.WriteString(rt.vocab[id])
					}
				}
				require.Equal(t, " "+p, text.String(), "run.c's encoding decodes to the prompt with its dummy prefix")
			}
			out, stderr, code := kvref(t, "run", "-m", bin, "-p", "Once upon a time", "-n", "4", "--temp", "0")
			require.Equal(t, 0, code, stderr)
			require.True(t, strings.HasPrefix(out, "Once upon a time"))
		})
	}
	// The vocabulary kvref synth used to write for llama2.c, without the space piece, is
	// what run.c crashed on: the reader here sees it.
	m, err := synth.Tiny.Model()
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, tokenizer.WriteLlama2c(&buf, m.Tokenizer.(*tokenizer.SPM).Vocab()))
	rt, err := readRunc(buf.Bytes(), m.Config.Vocab)
	require.NoError(t, err)
	_, err = rt.encode("Once upon a time")
	require.ErrorContains(t, err, `no " " piece`)
}
