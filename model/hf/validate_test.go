package hf_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/hf"
	"github.com/kvref/kvref/model/synth"
)

// writeTiny writes the tiny synthetic model as a Hugging Face directory and returns it.
func writeTiny(t *testing.T) string {
	t.Helper()
	m, err := synth.Tiny.Model()
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, hf.Write(dir, m, hf.WriteOptions{}))
	return dir
}

// editJSON sets key in dir/name (a JSON object) to value.
func editJSON(t *testing.T, dir, name, key string, value any) {
	t.Helper()
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, json.Unmarshal(data, &obj))
	obj[key] = value
	out, err := json.Marshal(obj)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, out, 0o644))
}

// TestLoadRejectsHyperParametersThatGiveNaN: config.json values that used to load and then
// give NaN logits, and token ids outside the vocabulary, are refused at load with an error
// naming the file and the key.
func TestLoadRejectsHyperParametersThatGiveNaN(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		file, key string
		value     any
		want      string
	}{
		{"config.json", "rms_norm_eps", -1, "rms_norm_eps is -1"},
		{"config.json", "rms_norm_eps", 0, "rms_norm_eps is 0"},
		{"config.json", "rms_norm_eps", 1e300, "rms_norm_eps is 1e+300"},
		{"config.json", "rope_theta", -10000, "rope_theta is -10000"},
		{"config.json", "bos_token_id", 600, "bos_token_id 600 is outside the vocabulary of 259 tokens"},
		{"config.json", "bos_token_id", -1, "bos_token_id -1 is outside"},
		{"generation_config.json", "bos_token_id", 259, "generation_config.json: bos_token_id 259 is outside"},
		// eos_token_id is checked by tokenizer.FromHFDir.
		{"config.json", "eos_token_id", []int{2, 1000}, "eos_token_id 1000 is not a token"},
		{"generation_config.json", "eos_token_id", 259, "generation_config.json: eos_token_id 259 is not a token"},
	} {
		t.Run(tc.key+"="+string(must(json.Marshal(tc.value))), func(t *testing.T) {
			dir := writeTiny(t)
			editJSON(t, dir, tc.file, tc.key, tc.value)
			_, err := hf.Load(dir)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.Contains(t, err.Error(), tc.file)
		})
	}
	// null means none.
	dir := writeTiny(t)
	editJSON(t, dir, "config.json", "bos_token_id", nil)
	m, err := hf.Load(dir)
	require.NoError(t, err)
	m.Close()
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
