package hf_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/hf"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// A Hugging Face directory's chat templates come from tokenizer_config.json (a list of
// named ones here), and chat_template.jinja beside it is the default, as transformers saves it.
func TestLoadReadsChatTemplates(t *testing.T) {
	t.Parallel()

	m, err := synth.Tiny.Model()
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, hf.Write(dir, m, hf.WriteOptions{}))
	loaded, err := hf.Load(dir)
	require.NoError(t, err)
	require.Empty(t, loaded.ChatTemplates)
	loaded.Close()

	path := filepath.Join(dir, "tokenizer_config.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var cfg map[string]any
	require.NoError(t, json.Unmarshal(data, &cfg))
	cfg["chat_template"] = []map[string]string{{"name": "default", "template": "A"}, {"name": "tool_use", "template": "B"}}
	data, err = json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	loaded, err = hf.Load(dir)
	require.NoError(t, err)
	require.Equal(t, chattemplate.Set{"default": "A", "tool_use": "B"}, loaded.ChatTemplates)
	loaded.Close()

	require.NoError(t, os.WriteFile(filepath.Join(dir, "chat_template.jinja"), []byte("C"), 0o644))
	loaded, err = hf.Load(dir)
	require.NoError(t, err)
	defer loaded.Close()
	require.Equal(t, chattemplate.Set{"default": "C", "tool_use": "B"}, loaded.ChatTemplates)
}
