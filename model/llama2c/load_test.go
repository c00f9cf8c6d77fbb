package llama2c

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	l2c "github.com/kvref/kvref/format/llama2c"
	"github.com/kvref/kvref/internal/kernels"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model"
)

// TestStories260KMatchesGGUF: stories260K.bin with tok512.bin is the model
// stories260K.gguf holds (converted from the same checkpoint), so the two must
// give bit-identical logits over every golden sequence and the same token ids
// for every golden prompt.
func TestStories260KMatchesGGUF(t *testing.T) {
	t.Parallel()

	bin, err := Load(testutil.Shared(t, "models/stories260K.bin"), testutil.Shared(t, "models/tok512.bin"))
	require.NoError(t, err)
	defer bin.Close()
	gg, err := model.LoadGGUF(testutil.Shared(t, "models/stories260K.gguf"))
	require.NoError(t, err)
	defer gg.Close()

	require.Equal(t, model.Config{
		Arch: "llama", Dim: 64, Layers: 5, Heads: 8, KVHeads: 4, HeadDim: 8, Hidden: 172, Vocab: 512, Context: 512,
		RopeBase: 10000, RopeDims: 8, RopeStyle: kernels.RoPEAdjacent, NormEps: 1e-5, Tied: true,
	}, bin.Config)
	// The GGUF conversion stored the classifier as a tensor of its own and
	// declared a longer context; everything else agrees.
	want := gg.Config
	want.Context, want.Tied = 512, true
	require.Equal(t, want, bin.Config)
	require.Same(t, bin.Weights.TokenEmbed, bin.Weights.Output)
	require.Equal(t, gg.Weights.Bytes()-bin.Weights.TokenEmbed.Bytes(), bin.Weights.Bytes())

	goldens := testutil.Goldens(t, "stories260K")
	for _, g := range goldens {
		t.Run(g.Name, func(t *testing.T) {
			require.Equal(t, g.PromptIDs, bin.Tokenizer.Encode(g.Prompt, true))
			require.Equal(t, gg.Tokenizer.Encode(g.Prompt, true), bin.Tokenizer.Encode(g.Prompt, true))
			tokens := g.Tokens()
			requireBitwise(t, reference(t, gg, tokens), reference(t, bin, tokens), g.Name)
			// And the greedy choices are the golden ones.
			logits := reference(t, bin, tokens)
			for i, s := range g.Steps {
				row := logits[len(g.PromptIDs)-1+i]
				best := 0
				for id, x := range row {
					if x > row[best] {
						best = id
					}
				}
				require.Equal(t, s.ID, best, "step %d", i)
			}
		})
	}
}

// TestLoadAliasesTheMapping: the weight matrices are the file's bytes, not copies.
func TestLoadAliasesTheMapping(t *testing.T) {
	t.Parallel()

	data := checkpoint(t, 8, 16, 2, 2, 1, 5, 4)
	dir := t.TempDir()
	path := filepath.Join(dir, "m.bin")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	tokPath := filepath.Join(dir, "tok.bin")
	require.NoError(t, os.WriteFile(tokPath, vocabBin(t, 5), 0o644))
	m, err := Load(path, tokPath)
	require.NoError(t, err)
	require.Equal(t, path, m.Source)
	row := m.Weights.TokenEmbed.Row(1, nil)
	require.Equal(t, math.Float32frombits(le32(data[l2c.HeaderSize+4*8:])), row[0])
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "Close twice")

	p, err := Parse("mem", data, vocabTokenizer(t, 5))
	require.NoError(t, err)
	row = p.Weights.Layers[1].Wq.Row(0, nil)
	data[l2c.HeaderSize+4*(5*8+2*8+8*8)] = 0x7f // first value of wq[1] (after the embedding, two attention norms and wq[0])
	require.Equal(t, byte(0x7f), byte(math.Float32bits(row[0])), "Parse aliases its data")
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// TestUnsharedClassifier: a negative vocab_size puts a separate classifier at the end.
func TestUnsharedClassifier(t *testing.T) {
	t.Parallel()

	data := checkpoint(t, 8, 16, 1, 2, 2, -5, 4)
	m, err := Parse("unshared", data, vocabTokenizer(t, 5))
	require.NoError(t, err)
	require.False(t, m.Config.Tied)
	require.NotSame(t, m.Weights.TokenEmbed, m.Weights.Output)
	last := m.Weights.Output.Row(4, nil)[7]
	require.Equal(t, math.Float32frombits(le32(data[len(data)-4:])), last)
	require.Equal(t, "wcls", m.Weights.Output.Name)
	require.Equal(t, "w2[0]", m.Weights.Layers[0].Down.Name)
}

func TestReadHeaderRejectsBadFiles(t *testing.T) {
	t.Parallel()

	good := checkpoint(t, 8, 16, 2, 2, 1, 5, 4) // 5020 bytes
	cases := []struct {
		name string
		data []byte
		want []string
	}{
		{"empty", nil, []string{"0 bytes", "too short", "28-byte header"}},
		{"short", good[:27], []string{"27 bytes", "too short"}},
		{"gguf", []byte("GGUF\x03\x00\x00\x00"), []string{"is a GGUF file"}},
		{"version 1", append(headerBytes(0x616b3432, 1), make([]byte, 300)...), []string{"version-1 llama2.c checkpoint", "--version 0"}},
		{"zero dim", headerBytes(0, 16, 2, 2, 1, 5, 4), []string{"dim is 0, want ≥ 1"}},
		{"negative hidden", headerBytes(8, -16, 2, 2, 1, 5, 4), []string{"hidden_dim is -16"}},
		{"zero layers", headerBytes(8, 16, 0, 2, 1, 5, 4), []string{"n_layers is 0"}},
		{"zero heads", headerBytes(8, 16, 2, 0, 1, 5, 4), []string{"n_heads is 0"}},
		{"negative kv heads", headerBytes(8, 16, 2, 2, -1, 5, 4), []string{"n_kv_heads is -1"}},
		{"zero vocab", headerBytes(8, 16, 2, 2, 1, 0, 4), []string{"vocab_size is 0"}},
		{"zero seq_len", headerBytes(8, 16, 2, 2, 1, 5, 0), []string{"seq_len is 0"}},
		{"dim not a multiple of heads", headerBytes(8, 16, 2, 3, 1, 5, 4), []string{"dim 8 is not a multiple of n_heads 3"}},
		{"heads not a multiple of kv heads", headerBytes(8, 16, 2, 2, 4, 5, 4), []string{"n_heads 2 is not a multiple of n_kv_heads 4"}},
		{"odd head size", headerBytes(6, 16, 2, 2, 1, 5, 4), []string{"head size dim/n_heads = 6/2 = 3 is odd"}},
		{"overflow", headerBytes(math.MaxInt32-1, math.MaxInt32, math.MaxInt32, 1, 1, math.MinInt32, math.MaxInt32),
			[]string{"more than 2^63 bytes", "vocab_size 2147483648 (separate classifier)"}},
		{"huge but not overflowing", headerBytes(1<<20, 1<<20, 1<<10, 1, 1, 1<<20, 1<<20), []string{"file is 28 bytes", "needs exactly", "truncated"}},
		{"truncated", good[:len(good)-4], []string{"file is 5016 bytes", "needs exactly 5020", "truncated"}},
		{"too long", append(append([]byte(nil), good...), 0, 0, 0, 0), []string{"file is 5024 bytes", "needs exactly 5020"}},
		{"classifier without negative vocab", append(append([]byte(nil), good...), make([]byte, 5*8*4)...),
			[]string{"file is 5180 bytes", "needs exactly 5020", "as if vocab_size were negative"}},
		{"negative vocab without classifier", append(headerBytes(8, 16, 2, 2, 1, -5, 4), good[l2c.HeaderSize:]...),
			[]string{"file is 5020 bytes", "needs exactly 5180", "lacks the vocab_size × dim classifier"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := l2c.ReadHeader("bad.bin", c.data)
			require.Error(t, err)
			require.Contains(t, err.Error(), "bad.bin")
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
			_, err = Parse("bad.bin", c.data, vocabTokenizer(t, 5))
			require.Error(t, err, "Parse")
		})
	}
	h, err := l2c.ReadHeader("good.bin", good)
	require.NoError(t, err)
	require.Equal(t, l2c.Header{Dim: 8, Hidden: 16, Layers: 2, Heads: 2, KVHeads: 1, Vocab: 5, SeqLen: 4, Shared: true}, h)
	require.Equal(t, int64(len(good)), h.FileSize())
	require.Equal(t, int64(-1), l2c.Header{Dim: math.MaxInt32, Hidden: math.MaxInt32, Layers: math.MaxInt32, Heads: 1, KVHeads: 1, Vocab: 1, SeqLen: 1}.FileSize())
}

func TestLoadRejects(t *testing.T) {
	t.Parallel()

	good := checkpoint(t, 8, 16, 2, 2, 1, 5, 4)
	dir := t.TempDir()
	path := filepath.Join(dir, "m.bin")
	require.NoError(t, os.WriteFile(path, good, 0o644))
	tok5 := filepath.Join(dir, "tok5.bin")
	require.NoError(t, os.WriteFile(tok5, vocabBin(t, 5), 0o644))
	tok6 := filepath.Join(dir, "tok6.bin")
	require.NoError(t, os.WriteFile(tok6, vocabBin(t, 6), 0o644))
	empty := filepath.Join(dir, "empty.bin")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))

	for _, c := range []struct {
		name, path, tok string
		want            []string
	}{
		{"missing model", filepath.Join(dir, "nope.bin"), tok5, []string{"nope.bin", "no such file"}},
		{"missing tokenizer", path, filepath.Join(dir, "nope-tok.bin"), []string{"nope-tok.bin"}},
		{"no tokenizer", path, "", []string{"m.bin", "holds no vocabulary", "tokenizer.bin"}},
		{"tokenizer of another model", path, tok6, []string{"tok6.bin", "bytes left after the 5 tokens"}},
		{"empty model", empty, tok5, []string{"empty.bin", "0 bytes"}},
		{"a GGUF", writeTemp(t, "x.gguf", []byte("GGUF\x03\x00\x00\x00\x00\x00\x00\x00")), tok5, []string{"x.gguf", "GGUF file"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(c.path, c.tok)
			require.Error(t, err)
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}

	// Parse checks the tokenizer it is given.
	_, err := Parse("m.bin", good, nil)
	require.ErrorContains(t, err, "no tokenizer")
	_, err = Parse("m.bin", good, vocabTokenizer(t, 4))
	require.ErrorContains(t, err, "the tokenizer has 4 tokens but the header's vocab_size is 5")
	// Sizes the model package cannot compute with.
	_, err = Parse("big.bin", checkpoint(t, 8, 16, 4097, 2, 1, 5, 1), vocabTokenizer(t, 5))
	require.ErrorContains(t, err, "big.bin")
	require.ErrorContains(t, err, "layers 4097")
}

// TestConfigIsRunCs: the constants are the ones run.c hardcodes.
func TestConfigIsRunCs(t *testing.T) {
	t.Parallel()

	c := Config(l2c.Header{Dim: 288, Hidden: 768, Layers: 6, Heads: 6, KVHeads: 6, Vocab: 32000, SeqLen: 256, Shared: true})
	require.Equal(t, 48, c.HeadDim)
	require.Equal(t, 48, c.RopeDims)
	require.Equal(t, 10000.0, c.RopeBase)
	require.Equal(t, float32(1e-5), c.NormEps)
	require.Equal(t, kernels.RoPEAdjacent, c.RopeStyle)
	require.Equal(t, 256, c.Context)
	require.NoError(t, c.Validate())
}
