package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStories260K checks the tokenizer of a real model file.
func TestStories260K(t *testing.T) {
	t.Parallel()

	s := loadGGUF(t, sharedPath(t, "models/stories260K.gguf"))
	require.Equal(t, 512, s.VocabSize())
	require.Equal(t, 1, s.BOS())
	require.Equal(t, 2, s.EOS())
	require.True(t, s.AddBOS())
	require.True(t, s.IsEOG(2))
	require.False(t, s.IsEOG(1))

	ids := s.Encode("Once upon a time", true)
	require.NotEmpty(t, ids)
	require.Equal(t, 1, ids[0], "Encode must begin with BOS")
	require.Equal(t, "Once upon a time", s.Decode(ids))
}

// golden is the part of a llama.cpp golden-output file the tokenizer checks.
type golden struct {
	Prompt    string `json:"prompt"`
	PromptIDs []int  `json:"prompt_ids"`
	Steps     []struct {
		ID int `json:"id"`
	} `json:"steps"`
}

// TestStories260KGolden checks Encode(prompt, true) against the prompt ids
// llama.cpp used for every golden file, and that decoding prompt and
// continuation gives back the prompt followed by readable text.
func TestStories260KGolden(t *testing.T) {
	t.Parallel()

	s := loadGGUF(t, sharedPath(t, "models/stories260K.gguf"))
	files, err := filepath.Glob(filepath.Join(sharedPath(t, "golden/stories260K"), "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			var g golden
			require.NoError(t, json.Unmarshal(data, &g))
			require.NotEmpty(t, g.PromptIDs)

			require.Equal(t, g.PromptIDs, s.Encode(g.Prompt, true), "Encode(%q, true)", g.Prompt)
			require.Equal(t, g.Prompt, s.Decode(g.PromptIDs))

			all := append([]int{}, g.PromptIDs...)
			for _, st := range g.Steps {
				all = append(all, st.ID)
			}
			text := s.Decode(all)
			require.True(t, strings.HasPrefix(text, g.Prompt), "Decode(prompt+steps) = %q", text)
		})
	}
}

// TestStories260KContinuation decodes the greedy continuation recorded in
// the golden file and compares it with the text in ../shared/README.md.
func TestStories260KContinuation(t *testing.T) {
	t.Parallel()

	s := loadGGUF(t, sharedPath(t, "models/stories260K.gguf"))
	data, err := os.ReadFile(sharedPath(t, "golden/stories260K/once-upon-a-time.json"))
	require.NoError(t, err)
	var g golden
	require.NoError(t, json.Unmarshal(data, &g))
	ids := append([]int{}, g.PromptIDs...)
	for _, st := range g.Steps {
		ids = append(ids, st.ID)
	}
	const want = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball."
	require.True(t, strings.HasPrefix(s.Decode(ids), want), "got %q", s.Decode(ids))
}
