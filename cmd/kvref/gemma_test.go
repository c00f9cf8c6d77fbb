package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/chat"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/runsummary"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// TestSynthGemma: kvref synth --arch gemma2|gemma3 writes GGUF and Hugging Face models with
// the real models' window, pattern and soft-caps unless told otherwise, both run with
// --check to the same tokens, and a layout GGUF cannot carry is written only as a directory.
func TestSynthGemma(t *testing.T) {
	dir := t.TempDir()
	shape := []string{"--dim", "64", "--layers", "6", "--heads", "4", "--kv-heads", "2", "--head-dim", "32", "--hidden", "96"}
	run := []string{"-p", "Once upon a time", "-n", "12", "--temp", "0", "--ignore-eos", "--json", "--check"}
	for _, arch := range []string{"gemma2", "gemma3"} {
		var first []runsummary.TokenLine
		for _, format := range []string{"gguf", "hf"} {
			out := filepath.Join(dir, arch+"."+format)
			_, stderr, code := kvref(t, append([]string{"synth", "--arch", arch, "--format", format, "-o", out, "--sliding-window", "6"}, shape...)...)
			require.Equal(t, 0, code, stderr)
			info, stderr, code := kvref(t, "inspect", out)
			require.Equal(t, 0, code, stderr)
			if arch == "gemma2" {
				require.Contains(t, info, "sliding window 6 on 3 of 6 layers")
				require.Contains(t, info, "attention soft-cap 50, logit soft-cap 30")
			} else {
				require.Contains(t, info, "sliding window 6 on 5 of 6 layers, sliding layers' rope base 10000")
				require.Contains(t, info, "context          32768")
			}
			stdout, stderr, code := kvref(t, append([]string{"run", "-m", out}, run...)...)
			require.Equal(t, 0, code, stderr)
			toks := parseJSONRun(t, stdout).Tokens
			require.Len(t, toks, 12)
			if first == nil {
				first = toks
				continue
			}
			require.Equal(t, first, toks, "%s: the directory computes what the GGUF computes", arch)
		}
	}
	// Every third layer global and a query scalar of 24: a Hugging Face layout only.
	layout := append([]string{"synth", "--arch", "gemma3", "--global-every", "3", "--query-scalar", "24"}, shape...)
	_, stderr, code := kvref(t, append(layout, "-o", filepath.Join(dir, "x.gguf"))...)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "cannot say that every 3 layers one is global")
	require.Contains(t, stderr, "--format hf")
	hf := filepath.Join(dir, "layout-hf")
	_, stderr, code = kvref(t, append(layout, "--format", "hf", "-o", hf)...)
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(filepath.Join(hf, "config.json"))
	require.NoError(t, err)
	var cfg struct {
		LayerTypes  []string `json:"layer_types"`
		QueryScalar float64  `json:"query_pre_attn_scalar"`
	}
	require.NoError(t, json.Unmarshal(data, &cfg))
	require.Equal(t, 24.0, cfg.QueryScalar)
	require.Equal(t, []string{"sliding_attention", "sliding_attention", "full_attention", "sliding_attention", "sliding_attention", "full_attention"}, cfg.LayerTypes)
	_, stderr, code = kvref(t, append([]string{"run", "-m", hf}, run...)...)
	require.Equal(t, 0, code, stderr)

	// The real models' defaults that do not fit: a window longer than the context.
	_, stderr, code = kvref(t, append([]string{"synth", "--arch", "gemma2", "-c", "2048", "-o", filepath.Join(dir, "y.gguf")}, shape...)...)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "sliding window 4096 is longer than the context 2048")
}

// TestGemmaChat: kvref chat on a synthetic Gemma 3 carrying the shared gemma-3-1b-it
// template: the prompt is the template's (<start_of_turn>user ... <start_of_turn>model),
// the first reply ends at <end_of_turn> before the token limit (the same session run
// through package chat shows the token), and the second turn's line shows the history
// reused from the prefix cache.
func TestGemmaChat(t *testing.T) {
	tc, err := chattemplate.ReadTokenizerConfig(testutil.Shared(t, "chat-templates/gemma-3-1b-it/tokenizer_config.json"))
	require.NoError(t, err)
	dir := t.TempDir()
	tmpl := writeFile(t, dir, "gemma3.jinja", tc.Templates[chattemplate.DefaultName])
	gguf := filepath.Join(dir, "chat.gguf")
	_, stderr, code := kvref(t, "synth", "--arch", "gemma3", "--layers", "6", "--dim", "64", "--heads", "4", "--kv-heads", "1",
		"--head-dim", "32", "--hidden", "128", "--sliding-window", "16", "--chat-template", tmpl, "-o", gguf)
	require.Equal(t, 0, code, stderr)

	msgs := writeFile(t, dir, "m.json", `[{"role": "user", "content": "Hello"}]`)
	out, stderr, code := kvref(t, "template", "-m", gguf, "--messages", msgs, "--add-generation-prompt", "--json")
	require.Equal(t, 0, code, stderr)
	var rendered struct {
		Prompt    string `json:"prompt"`
		TokenIDs  []int  `json:"token_ids"`
		EndOfTurn string `json:"end_of_turn"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rendered))
	require.Equal(t, "<bos><start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n", rendered.Prompt)
	require.Equal(t, []int{synth.GemmaBOS, synth.GemmaStartOfTurn}, rendered.TokenIDs[:2], "one <bos> (the template writes it), then <start_of_turn>")
	require.Equal(t, "<end_of_turn>", rendered.EndOfTurn)

	const limit = 48
	script := writeFile(t, dir, "s.txt", "Hello\nTell me more\n")
	out, stderr, code = kvref(t, "chat", "-m", gguf, "--temp", "1", "--top-k", "0", "--top-p", "1", "--min-p", "0", "--seed", "1",
		"-n", "48", "--check", "--script", script)
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, stderr, "no chat template")
	require.NotContains(t, out, "<end_of_turn>", "the end of the turn is not printed")
	lines := cacheLines(t, out)
	require.Len(t, lines, 2, out)
	generated := lines[0][3]
	require.Less(t, generated, limit, "the first reply ended before the limit")
	require.Positive(t, lines[1][0], "the second turn reuses the history")
	require.Equal(t, lines[1][1], lines[1][0]+lines[1][2])

	// The same first turn through package chat, as kvref chat runs it: the reply's last
	// token is <end_of_turn>.
	m, err := model.LoadGGUF(gguf)
	require.NoError(t, err)
	defer m.Close()
	eng, err := engine.New(m, engine.Config{})
	require.NoError(t, err)
	defer eng.Close()
	format, err := chat.NewFormatter(m, chat.TemplateOptions{})
	require.NoError(t, err)
	s := &chat.Session{Engine: eng, Format: format, MaxTokens: limit, Check: true, Sampling: engine.Sampling{Temperature: 1, Seed: 1}} // --temp 1 --seed 1, no top-k/top-p/min-p
	turn, err := s.Send("Hello", nil)
	require.NoError(t, err)
	require.Equal(t, generated, turn.GeneratedTokens)
	require.Equal(t, synth.GemmaEndOfTurn, turn.ReplyTokens[len(turn.ReplyTokens)-1], "the reply ended at <end_of_turn>")
	require.Equal(t, "eos", turn.StopReason)
	require.True(t, strings.Contains(out, "> Hello\n"+turn.Reply), "kvref chat printed the same reply")
}
