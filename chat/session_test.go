package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/tokenizer"
	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// chatSpecials are the control tokens of a ChatML vocabulary.
var chatSpecials = []string{"<|im_start|>", "<|im_end|>", "<|endoftext|>"}

// chatModel is a tiny synthetic model whose GGUF carries a chat template and ChatML's
// special tokens: the template path of a real instruct model, end to end (its text is noise).
func chatModel(t *testing.T, template string, ctx int) *model.Model {
	t.Helper()
	s := synth.Tiny
	s.Context = ctx
	s.SpecialTokens = chatSpecials
	s.ChatTemplate = template
	m, err := s.Model()
	require.NoError(t, err)
	return m
}

func newSession(t *testing.T, m *model.Model, blockSize int) *Session {
	t.Helper()
	f, err := NewFormatter(m, TemplateOptions{})
	require.NoError(t, err)
	e, err := engine.New(m, engine.Config{BlockSize: blockSize, Threads: 1})
	require.NoError(t, err)
	t.Cleanup(e.Close)
	return &Session{Engine: e, Format: f, System: "You are a test.", MaxTokens: 12, Check: true,
		Sampling: engine.Sampling{Temperature: 0, TopP: 1, Seed: 1}}
}

// idOf returns the id of a token text.
func idOf(t *testing.T, m *model.Model, text string) int {
	ids := m.Tokenizer.EncodeSpecial(text, tokenizer.EncodeOptions{ParseSpecial: true})
	require.Len(t, ids, 1, text)
	return ids[0]
}

// Each turn's prompt is the whole conversation; the full blocks of the previous turns are
// prefix hits, checked bit for bit against the cache-free reference (Check).
func TestSessionReusesTheHistory(t *testing.T) {
	t.Parallel()

	m := chatModel(t, ChatML, 1024)
	const bs = 4
	s := newSession(t, m, bs)
	require.False(t, s.Format.Fallback)
	require.Equal(t, "<|im_end|>", s.Format.EndOfTurn)
	require.Empty(t, s.Format.StopStrings, "<|im_end|> is a token of this vocabulary")
	require.True(t, m.Tokenizer.IsEOG(idOf(t, m, "<|im_end|>")))

	var prev Turn
	var prevPrompt []int
	for i, msg := range []string{"Hello there", "How are you?", "Tell me more", "Thanks"} {
		turn, err := s.Send(msg, nil)
		require.NoError(t, err, "turn %d", i)
		_, prompt, err := s.Format.Prompt(Values(s.Messages()[:len(s.Messages())-1]), true)
		require.NoError(t, err)
		require.Equal(t, len(prompt), turn.PromptTokens)
		require.Contains(t, prompt, idOf(t, m, "<|im_start|>"), "special tokens are parsed in the rendered prompt")
		require.Equal(t, turn.PromptTokens, turn.ReusedTokens+turn.ComputedTokens)
		require.Equal(t, len(turn.ReplyTokens), turn.GeneratedTokens)
		stored := turn.PromptTokens + turn.GeneratedTokens - 1
		require.Equal(t, (stored+bs-1)/bs, turn.Blocks)
		require.Equal(t, int64(turn.Blocks)*s.Engine.Pool().Config().BytesPerBlock(), turn.Bytes)
		if i == 0 {
			require.Zero(t, turn.ReusedTokens, "nothing is cached before the first turn")
		} else {
			require.True(t, slices.Equal(prevPrompt, prompt[:len(prevPrompt)]), "turn %d's prompt extends turn %d's", i, i-1)
			require.GreaterOrEqual(t, turn.ReusedTokens, (len(prevPrompt)-1)/bs*bs, "turn %d reuses every full block of the previous prompt", i)
			if clean(t, s, prev) {
				t.Logf("turn %d: clean reply, %d reused", i, turn.ReusedTokens)
				// The reply re-tokenizes to what was generated: everything cached is reused.
				require.Equal(t, prev.CachedAfter, turn.ReusedTokens, "turn %d", i)
			}
		}
		prev, prevPrompt = turn, prompt
	}
	require.Len(t, s.Turns(), 4)
	require.Greater(t, s.Turns()[3].ReusedTokens, s.Turns()[1].ReusedTokens, "the reused history grows")
}

// clean reports whether a turn's reply, rendered into the next prompt, gives back the
// tokens generated (no control token inside it, which the text cannot carry).
func clean(t *testing.T, s *Session, turn Turn) bool {
	out := turn.ReplyTokens
	if n := len(out); n > 0 && s.Engine.Model().Tokenizer.IsEOG(out[n-1]) {
		out = out[:n-1]
	}
	return slices.Equal(s.Format.Tokenizer.EncodeSpecial(turn.Reply, tokenizer.EncodeOptions{ParseSpecial: true}), out)
}

// Generation stops at the template's end-of-turn token: whenever a reply samples
// <|im_end|> it is the reply's last token and the stop is "eos". At a high temperature over
// 40 seeds some replies do sample it.
func TestSessionStopsAtTheEndOfTurnToken(t *testing.T) {
	t.Parallel()

	m := chatModel(t, ChatML, 512)
	s := newSession(t, m, 16)
	s.Check = false
	s.MaxTokens = 48
	imEnd := idOf(t, m, "<|im_end|>")
	ended := 0
	for seed := range uint64(40) {
		s.Reset()
		s.Sampling = engine.Sampling{Temperature: 4, TopP: 1, Seed: seed}
		turn, err := s.Send("Hi", nil)
		require.NoError(t, err)
		if i := slices.Index(turn.ReplyTokens, imEnd); i >= 0 {
			require.Equal(t, len(turn.ReplyTokens)-1, i, "seed %d: generation went on after <|im_end|>", seed)
			require.Equal(t, "eos", turn.StopReason)
			ended++
		} else if turn.StopReason == "eos" {
			last := turn.ReplyTokens[len(turn.ReplyTokens)-1]
			require.True(t, m.Tokenizer.IsEOG(last), "seed %d: stopped at %d, no end-of-generation token", seed, last)
		}
		require.NotContains(t, turn.Reply, "<|im_end|>")
	}
	require.Positive(t, ended, "no reply sampled <|im_end|> in 40 tries")
	t.Logf("%d of 40 replies ended at <|im_end|>", ended)
}

// A real template from the fixtures (Qwen2.5's, in the synthetic model's GGUF) drives the
// same loop.
func TestSessionWithAFixtureTemplate(t *testing.T) {
	t.Parallel()

	tc, err := chattemplate.ReadTokenizerConfig(filepath.Join(fixtureDir(t), "qwen2.5-0.5b-instruct", "tokenizer_config.json"))
	require.NoError(t, err)
	m := chatModel(t, tc.Templates[chattemplate.DefaultName], 1024)
	s := newSession(t, m, 8)
	s.System = ""
	require.Equal(t, "<|im_end|>", s.Format.EndOfTurn)
	t1, err := s.Send("What is 2 + 2?", nil)
	require.NoError(t, err)
	text, _, err := s.Format.Prompt(Values(s.Messages()[:1]), true)
	require.NoError(t, err)
	require.Equal(t, "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nWhat is 2 + 2?<|im_end|>\n<|im_start|>assistant\n", text)
	t2, err := s.Send("And 3 + 3?", nil)
	require.NoError(t, err)
	require.GreaterOrEqual(t, t2.ReusedTokens, (t1.PromptTokens-1)/8*8)
	require.Positive(t, t2.ReusedTokens)
}

func TestSessionRefusesWithoutChangingTheConversation(t *testing.T) {
	t.Parallel()

	one := `{% if messages | length > 2 %}{{ raise_exception('this template takes one exchange') }}{% endif %}` + ChatML
	m := chatModel(t, one, 1024)
	s := newSession(t, m, 16)
	s.System = ""
	_, err := s.Send("first", nil)
	require.NoError(t, err)
	before := s.Messages()
	_, err = s.Send("second", nil)
	var raised *chattemplate.RaiseError
	require.True(t, errors.As(err, &raised), "%v", err)
	require.Equal(t, "this template takes one exchange", raised.Message)
	require.Equal(t, before, s.Messages())
	require.Len(t, s.Turns(), 1)

	short := newSession(t, chatModel(t, ChatML, 64), 16)
	_, err = short.Send(strings.Repeat("long ", 20), nil)
	require.ErrorIs(t, err, ErrTooLong)
	require.ErrorContains(t, err, "the context holds 64")
	require.Len(t, short.Messages(), 1, "only the system message")

	var buf bytes.Buffer
	require.NoError(t, s.Save(&buf))
	var saved, want []Message
	require.NoError(t, json.Unmarshal(buf.Bytes(), &saved))
	b, _ := json.Marshal(before) // the reply is noise: JSON carries its invalid bytes as U+FFFD
	require.NoError(t, json.Unmarshal(b, &want))
	require.Equal(t, want, saved)
	path := filepath.Join(t.TempDir(), "chat.json")
	require.NoError(t, s.SaveFile(path))
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, buf.String(), string(file), "SaveFile writes what Save does")
}

// The text a session streams adds up to the reply.
func TestSessionStreamsTheReply(t *testing.T) {
	t.Parallel()

	s := newSession(t, chatModel(t, ChatML, 512), 16)
	s.MaxTokens = 30
	var got strings.Builder
	turn, err := s.Send("Hello", func(text string) error {
		got.WriteString(text)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, turn.Reply, got.String())
	require.Equal(t, s.Engine.Model().Tokenizer.Decode(turn.ReplyTokens), turn.Reply)
}
