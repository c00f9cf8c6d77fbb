package builtin

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/quant"
)

func TestEmbeddedFileIsStories260K(t *testing.T) {
	t.Parallel()

	sum := sha256.Sum256(GGUF())
	require.Equal(t, SHA256, hex.EncodeToString(sum[:]))
	shared, err := os.ReadFile(testutil.Shared(t, "models/stories260K.gguf"))
	require.NoError(t, err)
	require.Equal(t, shared, GGUF(), "the embedded file is ../shared/models/stories260K.gguf")
}

// TestEmbeddedModelTellsTheStory: greedy decoding from "Once upon a time" continues as
// ../shared/README.md says stories260K does.
func TestEmbeddedModelTellsTheStory(t *testing.T) {
	t.Parallel()

	m, err := Model()
	require.NoError(t, err)
	defer m.Close()
	c := m.Config
	require.Equal(t, [4]int{64, 5, 8, 4}, [4]int{c.Dim, c.Layers, c.Heads, c.KVHeads})
	e, err := engine.New(m, engine.Config{KType: quant.F32, VType: quant.F32})
	require.NoError(t, err)
	defer e.Close()
	prompt := m.Tokenizer.Encode("Once upon a time", true)
	res, err := e.Generate(engine.Request{Prompt: prompt, MaxTokens: 32, Check: true}, func(engine.Token) error { return nil })
	require.NoError(t, err)
	want := ", there was a little girl named Lily. She loved to play outside in the park."
	require.GreaterOrEqual(t, len(res.Texts[0]), len(want), res.Texts[0])
	require.Equal(t, want, res.Texts[0][:len(want)])
}
