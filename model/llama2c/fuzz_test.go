package llama2c

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	l2c "github.com/kvref/kvref/format/llama2c"
)

// FuzzParse feeds arbitrary bytes to ReadHeader and Parse. Neither may panic;
// a checkpoint they accept must run a forward pass and survive Write: the
// rewritten file has the same header and weights (the freq_cis tables aside),
// unless a separate classifier equal to the embedding is written shared.
func FuzzParse(f *testing.F) {
	f.Add(checkpoint(f, 8, 16, 2, 2, 1, 5, 4))
	f.Add(checkpoint(f, 4, 2, 1, 1, 1, -3, 1))
	f.Add(checkpoint(f, 2, 1, 1, 1, 1, 1, 1))
	f.Add(headerBytes(1<<20, 1<<20, 1<<10, 1, 1, 1<<20, 1<<20))
	f.Add([]byte("GGUF\x03\x00\x00\x00"))

	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := l2c.ReadHeader("fuzz.bin", data)
		if err != nil {
			return
		}
		if h.Vocab > 1<<12 {
			t.Skip("vocabulary too large for a quick tokenizer")
		}
		m, err := Parse("fuzz.bin", data, vocabTokenizer(t, h.Vocab))
		require.NoError(t, err, "ReadHeader accepted the file but Parse did not")
		reference(t, m, []int{0, h.Vocab - 1})

		var buf bytes.Buffer
		require.NoError(t, Write(&buf, m), "cannot write back an accepted checkpoint")
		out := buf.Bytes()
		h2, err := l2c.ReadHeader("rewritten.bin", out)
		require.NoError(t, err, "rewritten checkpoint does not parse")
		if h2.Shared != h.Shared {
			require.Falsef(t, h.Shared || !sameValues(m.Weights.Output, m.Weights.TokenEmbed), "classifier shared %v, rewritten %v", h.Shared, h2.Shared)
			return
		}
		freqStart := l2c.HeaderSize
		for _, s := range h.Segments()[:11] {
			freqStart += s.Count * s.Rows * s.Cols * 4
		}
		freqEnd := freqStart + 2*h.SeqLen*h.HeadDim()/2*4
		require.False(t, !bytes.Equal(data[:freqStart], out[:freqStart]) || !bytes.Equal(data[freqEnd:], out[freqEnd:]), "rewritten checkpoint differs outside the freq_cis tables")
	})
}
