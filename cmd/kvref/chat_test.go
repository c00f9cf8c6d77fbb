package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// reCacheLine reads the line kvref chat prints after each reply.
var reCacheLine = regexp.MustCompile(`\[cache: (\d+) of (\d+) prompt tokens reused, (\d+) computed, (\d+) generated · (\d+) blocks in use, (\d+) B · (\d+) tokens cached for the next turn\]`)

// cacheLines returns the numbers of every cache line of a chat's output.
func cacheLines(t *testing.T, out string) [][7]int {
	t.Helper()
	var lines [][7]int
	for _, m := range reCacheLine.FindAllStringSubmatch(out, -1) {
		var v [7]int
		for i := range v {
			v[i], _ = strconv.Atoi(m[i+1])
		}
		lines = append(lines, v)
	}
	return lines
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// kvref chat on the built-in model (no template: ChatML): every reply's cache line, the
// reused history growing turn by turn, /save, /reset and the end of the script.
func TestChatScript(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "conv.json")
	script := writeFile(t, dir, "s.txt", "# a comment\nOnce upon a time\n\nThe cat\nThe dog\n/save "+saved+"\n/reset\nOnce upon a time\n/stats\n")
	out, stderr, code := kvref(t, "chat", "--temp", "0", "-n", "12", "--check", "--system", "Tell stories.", "--script", script)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "has no chat template: using ChatML, as llama.cpp does")
	require.Contains(t, out, "# a comment\n> Once upon a time\n")
	lines := cacheLines(t, out)
	require.Len(t, lines, 4, out)
	bytesPerBlock := 16 * 1280 // stories260K: 1280 B per token, blocks of 16
	for i, l := range lines {
		reused, prompt, computed, generated, blocks, bytes, cachedAfter := l[0], l[1], l[2], l[3], l[4], l[5], l[6]
		require.Equal(t, prompt, reused+computed, "turn %d", i)
		require.Equal(t, (prompt+generated-1+15)/16, blocks, "turn %d", i)
		require.Equal(t, blocks*bytesPerBlock, bytes, "turn %d", i)
		require.Equal(t, (prompt+generated-1)/16*16, cachedAfter, "turn %d: every full block of the conversation stays cached", i)
	}
	require.Zero(t, lines[0][0], "the first turn computes everything")
	for i := 1; i < 3; i++ {
		require.Equal(t, lines[i-1][6], lines[i][0], "turn %d reuses everything turn %d left cached", i, i-1)
		require.Greater(t, lines[i][0], lines[i-1][0], "the reused history grows")
	}
	// After /reset the same first message reuses the blocks of the first turn's prompt.
	require.Equal(t, (lines[0][1]-1)/16*16, lines[3][0])
	require.Contains(t, out, "(a new conversation)")
	require.Contains(t, out, "turns     1\n")

	var msgs []struct{ Role, Content string }
	data, err := os.ReadFile(saved)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &msgs))
	require.Len(t, msgs, 7)
	require.Equal(t, "system", msgs[0].Role)
	require.Equal(t, "The dog", msgs[5].Content)
	// kvref template renders the saved conversation.
	rendered, stderr, code := kvref(t, "template", "--messages", saved)
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasPrefix(rendered, "<|im_start|>system\nTell stories.<|im_end|>\n<|im_start|>user\nOnce upon a time<|im_end|>\n"), rendered)
}

// A failing turn in a script ends the run with the line; unknown commands are errors.
func TestChatScriptErrors(t *testing.T) {
	dir := t.TempDir()
	tmpl := writeFile(t, dir, "t.jinja", `{% if messages | length > 1 %}{{ raise_exception('one message at a time, please') }}{% endif %}{{ messages[0].content }}`)
	script := writeFile(t, dir, "s.txt", "first\nsecond\n")
	_, stderr, code := kvref(t, "chat", "-n", "4", "--chat-template", tmpl, "--script", script)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `s.txt:2: "second": chat template `+tmpl+` raised an error: one message at a time, please`)

	script = writeFile(t, dir, "u.txt", "/frobnicate\n")
	_, stderr, code = kvref(t, "chat", "--script", script)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "unknown command /frobnicate")

	script = writeFile(t, dir, "long.txt", strings.Repeat("a long message ", 40)+"\n")
	_, stderr, code = kvref(t, "chat", "-c", "64", "--script", script)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "the context holds 64")
}

// A model the project makes, carrying a real template from the fixtures and ChatML's special
// tokens in its GGUF: kvref synth embeds them, kvref template renders with them (special
// tokens parsed into single ids), and kvref chat uses them without a fallback.
func TestChatWithASynthModelCarryingAFixtureTemplate(t *testing.T) {
	tc, err := chattemplate.ReadTokenizerConfig(testutil.Shared(t, "chat-templates/smollm2-135m-instruct/tokenizer_config.json"))
	require.NoError(t, err)
	dir := t.TempDir()
	tmplFile := writeFile(t, dir, "smollm2.jinja", tc.Templates[chattemplate.DefaultName])
	gguf := filepath.Join(dir, "chat.gguf")
	_, stderr, code := kvref(t, "synth", "-o", gguf, "--layers", "2", "--dim", "32", "--heads", "4", "--kv-heads", "2", "--hidden", "64", "--ctx", "512",
		"--special-tokens", "<|im_start|>,<|im_end|>,<|endoftext|>", "--chat-template", tmplFile)
	require.Equal(t, 0, code, stderr)

	msgs := writeFile(t, dir, "m.json", `[{"role": "user", "content": "Hi"}]`)
	out, stderr, code := kvref(t, "template", "-m", gguf, "--messages", msgs, "--add-generation-prompt", "--json")
	require.Equal(t, 0, code, stderr)
	var got struct {
		Prompt    string   `json:"prompt"`
		TokenIDs  []int    `json:"token_ids"`
		EndOfTurn string   `json:"end_of_turn"`
		Stops     []string `json:"stop_strings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Equal(t, "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", got.Prompt)
	// The byte-level vocabulary: <unk>, <s>, </s>, 256 bytes, then the special tokens.
	imStart, imEnd := 3+256, 3+256+1
	require.Equal(t, imStart, got.TokenIDs[1], "BOS, then <|im_start|> as one token")
	require.Contains(t, got.TokenIDs, imEnd)
	require.Equal(t, "<|im_end|>", got.EndOfTurn)
	require.Empty(t, got.Stops, "<|im_end|> is an end-of-generation token of this vocabulary")

	script := writeFile(t, dir, "s.txt", "Hello\nAgain\n")
	out, stderr, code = kvref(t, "chat", "-m", gguf, "--temp", "0", "-n", "8", "--check", "--script", script)
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, stderr, "no chat template")
	lines := cacheLines(t, out)
	require.Len(t, lines, 2, out)
	require.GreaterOrEqual(t, lines[1][0], (lines[0][1]-1)/16*16, "the second turn reuses the first prompt's full blocks")
}

// kvref template reproduces the fixtures' renders from their tokenizer_config.json, with
// --vars and --now, and a template's own error ends it with that message.
func TestTemplateCommandMatchesFixtures(t *testing.T) {
	dir := testutil.Shared(t, "chat-templates")
	f, err := os.Open(filepath.Join(dir, "renders.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	tmp := t.TempDir()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	checked := map[string]bool{}
	for sc.Scan() {
		var r struct {
			Family       string                     `json:"family"`
			Conversation string                     `json:"conversation_id"`
			Messages     json.RawMessage            `json:"messages"`
			AGP          bool                       `json:"add_generation_prompt"`
			Extra        map[string]json.RawMessage `json:"extra"`
			Rendered     *string                    `json:"rendered"`
			Error        *string                    `json:"error"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		// One render per family and kind (plain, with variables, an error), with a generation prompt.
		kind := r.Family + map[bool]string{true: "+vars"}[len(r.Extra) > 0] + map[bool]string{true: "+error"}[r.Error != nil]
		if checked[kind] || !r.AGP {
			continue
		}
		checked[kind] = true
		args := []string{"template", "--tokenizer-config", filepath.Join(dir, r.Family, "tokenizer_config.json"),
			"--messages", writeFile(t, tmp, "m.json", string(r.Messages)), "--now", "2024-07-26T00:00:00Z", "--add-generation-prompt"}
		if len(r.Extra) > 0 {
			b, _ := json.Marshal(r.Extra)
			args = append(args, "--vars", writeFile(t, tmp, "v.json", string(b)))
		}
		out, stderr, code := kvref(t, args...)
		if r.Error != nil {
			require.Equal(t, 1, code, kind)
			require.Contains(t, stderr, "raised an error: "+strings.TrimPrefix(*r.Error, "Error: "), kind)
			continue
		}
		require.Equal(t, 0, code, "%s: %s", kind, stderr)
		require.Equal(t, *r.Rendered, out, kind)
	}
	require.GreaterOrEqual(t, len(checked), 7+2+2, "every family, the two with variables, the two that raise")
}
