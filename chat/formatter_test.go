package chat

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/builtin"
	"github.com/kvref/kvref/tokenizer"
	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// fixtureDir returns ../shared/chat-templates, skipping when it is absent.
func fixtureDir(t *testing.T) string { return testutil.Shared(t, "chat-templates") }

// familyTemplates reads every family's tokenizer_config.json.
func familyTemplates(t *testing.T) map[string]chattemplate.TokenizerConfig {
	dir := fixtureDir(t)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]chattemplate.TokenizerConfig{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		tc, err := chattemplate.ReadTokenizerConfig(filepath.Join(dir, e.Name(), "tokenizer_config.json"))
		require.NoError(t, err)
		out[e.Name()] = tc
	}
	require.Len(t, out, 7)
	return out
}

// renderedEndOfTurn reads, from Hugging Face's render of each family's ends_with_assistant
// conversation (without a generation prompt), what follows the assistant's message on its
// line: the independent answer to what findEndOfTurn finds.
func renderedEndOfTurn(t *testing.T) map[string]string {
	f, err := os.Open(filepath.Join(fixtureDir(t), "renders.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r struct {
			Family, Conversation_ID, Rendered string
			AddGenerationPrompt               bool `json:"add_generation_prompt"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		if r.Conversation_ID != "ends_with_assistant" || r.AddGenerationPrompt {
			continue
		}
		const reply = "2 + 2 = 4."
		i := strings.Index(r.Rendered, reply)
		require.GreaterOrEqual(t, i, 0, r.Family)
		after, _, _ := strings.Cut(r.Rendered[i+len(reply):], "\n")
		out[r.Family] = strings.TrimSpace(after)
	}
	require.Len(t, out, 7)
	return out
}

// withTemplates is a model that has only a tokenizer and templates: all a Formatter reads.
func withTemplates(tok tokenizer.Tokenizer, set chattemplate.Set) *model.Model {
	return &model.Model{Tokenizer: tok, ChatTemplates: set, Source: "test"}
}

// Every family's end-of-turn marker is found, and with a vocabulary that does not have it
// as a token (stories260K's, whose only such token is its EOS </s>), it becomes a stop
// string.
func TestEndOfTurnOfEveryFamily(t *testing.T) {
	t.Parallel()

	want := renderedEndOfTurn(t)
	stories, err := builtin.Model()
	require.NoError(t, err)
	for family, tc := range familyTemplates(t) {
		f, err := NewFormatter(withTemplates(stories.Tokenizer, tc.Templates), TemplateOptions{})
		require.NoError(t, err, family)
		require.NotEmpty(t, want[family], family)
		require.Equal(t, want[family], f.EndOfTurn, family)
		if want[family] == "</s>" {
			require.Empty(t, f.StopStrings, family)
		} else {
			require.Equal(t, []string{want[family]}, f.StopStrings, family)
		}
		require.Empty(t, f.StopTokens, family)
	}
}

// With the families' own kind of vocabulary, the end-of-turn marker is one token that ends
// generation: no stop string is needed (the vocabulary's EOG list does it).
func TestEndOfTurnIsAnEOGTokenOfRealVocabularies(t *testing.T) {
	t.Parallel()

	configs := familyTemplates(t)
	vocab := func(rel string) tokenizer.Tokenizer {
		f, err := gguf.Open(testutil.Shared(t, rel))
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		tok, err := tokenizer.FromGGUF(f)
		require.NoError(t, err)
		return tok
	}
	hfTok := func(dir string) tokenizer.Tokenizer {
		data, err := os.ReadFile(testutil.Shared(t, dir+"/tokenizer.json"))
		require.NoError(t, err)
		cfg, err := os.ReadFile(testutil.Shared(t, dir+"/tokenizer_config.json"))
		require.NoError(t, err)
		tok, err := tokenizer.FromTokenizerJSON(data, cfg)
		require.NoError(t, err)
		return tok
	}
	for _, tc := range []struct {
		family string
		tok    tokenizer.Tokenizer
		marker string
	}{
		{"phi-3-mini-128k-instruct", vocab("tokenizer/ggml-vocab-phi-3.gguf"), "<|end|>"},
		{"mistral-7b-instruct-v0.1", vocab("tokenizer/ggml-vocab-llama-spm.gguf"), "</s>"},
		{"tinyllama-1.1b-chat-v1.0", vocab("tokenizer/ggml-vocab-llama-spm.gguf"), "</s>"},
		{"smollm2-135m-instruct", hfTok("tokenizer/hf/smollm"), "<|im_end|>"},
	} {
		f, err := NewFormatter(withTemplates(tc.tok, configs[tc.family].Templates), TemplateOptions{})
		require.NoError(t, err, tc.family)
		require.Equal(t, tc.marker, f.EndOfTurn, tc.family)
		ids := tc.tok.EncodeSpecial(tc.marker, tokenizer.EncodeOptions{ParseSpecial: true})
		require.Len(t, ids, 1, tc.family)
		require.True(t, tc.tok.IsEOG(ids[0]), "%s: %s (id %d) must end generation", tc.family, tc.marker, ids[0])
		require.Empty(t, f.StopStrings, tc.family)
		require.Empty(t, f.StopTokens, tc.family)
	}
}

func TestFallbackAndTemplateChoice(t *testing.T) {
	t.Parallel()

	stories, err := builtin.Model()
	require.NoError(t, err)
	f, err := NewFormatter(stories, TemplateOptions{})
	require.NoError(t, err)
	require.True(t, f.Fallback)
	require.Equal(t, "<|im_end|>", f.EndOfTurn)
	require.Equal(t, []string{"<|im_end|>"}, f.StopStrings, "stories260K has no <|im_end|> token: the text ends a reply")
	text, ids, err := f.Prompt(Values([]Message{{"user", "Hi"}}), true)
	require.NoError(t, err)
	require.Equal(t, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", text)
	require.Equal(t, stories.Tokenizer.BOS(), ids[0], "the vocabulary adds BOS and the template writes none")
	require.Equal(t, stories.Tokenizer.Encode(text, true), ids)

	_, err = NewFormatter(stories, TemplateOptions{Name: "tool_use"})
	require.ErrorContains(t, err, `has no chat templates, so none named "tool_use"`)

	// A template that writes bos_token gets no second BOS.
	two := withTemplates(stories.Tokenizer, chattemplate.Set{"default": "{{ bos_token }}{{ messages[0].content }}"})
	f, err = NewFormatter(two, TemplateOptions{})
	require.NoError(t, err)
	require.False(t, f.Fallback)
	_, ids, err = f.Prompt(Values([]Message{{"user", "Once"}}), false)
	require.NoError(t, err)
	require.Equal(t, stories.Tokenizer.Encode("Once", true), ids)
	require.Equal(t, "<s>", f.BOSToken)
	require.Equal(t, "</s>", f.EOSToken)

	file := filepath.Join(t.TempDir(), "t.jinja")
	require.NoError(t, os.WriteFile(file, []byte("[{{ messages | length }}]"), 0o644))
	f, err = NewFormatter(stories, TemplateOptions{File: file})
	require.NoError(t, err)
	text, err = f.Render(Values([]Message{{"user", "a"}, {"assistant", "b"}}), false)
	require.NoError(t, err)
	require.Equal(t, "[2]", text)
	_, err = NewFormatter(stories, TemplateOptions{File: file, TokenizerConfig: file})
	require.Error(t, err)
}
