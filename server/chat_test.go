package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/chat"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model/synth"
)

// chatShape is a tiny synthetic model whose GGUF carries ChatML and its special tokens.
var chatShapeModel = func() synth.Shape {
	s := synth.Tiny
	s.Name, s.Context = "tiny-chatml", 1024
	s.SpecialTokens = []string{"<|im_start|>", "<|im_end|>", "<|endoftext|>"}
	s.ChatTemplate = chat.ChatML
	return s
}()

func (ts *testServer) chat(t *testing.T, body map[string]any) ChatCompletionResponse {
	t.Helper()
	status, out := ts.post(t, "/v1/chat/completions", body)
	require.Equal(t, http.StatusOK, status, string(out))
	var resp ChatCompletionResponse
	require.NoError(t, json.Unmarshal(out, &resp), string(out))
	require.Equal(t, "chat.completion", resp.Object)
	require.True(t, strings.HasPrefix(resp.ID, "chatcmpl-"))
	require.NotNil(t, resp.Usage)
	return resp
}

func userMessages(texts ...string) []map[string]any {
	var out []map[string]any
	for i, t := range texts {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		out = append(out, map[string]any{"role": role, "content": t})
	}
	return out
}

// A chat request is the conversation rendered by the template and generated exactly as a
// completion of those token ids: same text, same usage, same logprobs.
func TestChatIsACompletionOfTheRenderedConversation(t *testing.T) {
	ts := start(t, chatShapeModel, engine.Config{BlockSize: 8}, Options{})
	f, err := chat.NewFormatter(ts.model, chat.TemplateOptions{})
	require.NoError(t, err)
	msgs := []map[string]any{{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}}
	_, ids, err := f.Prompt(chat.Values([]chat.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hello"}}), true)
	require.NoError(t, err)
	require.Contains(t, ids, 3+256, "<|im_start|> is one token")

	resp := ts.chat(t, map[string]any{"messages": msgs, "max_tokens": 12, "temperature": 0, "logprobs": true, "top_logprobs": 3, "return_token_ids": true})
	require.Equal(t, ids, resp.PromptTokenIDs)
	require.Len(t, resp.Choices, 1)
	c := resp.Choices[0]
	require.Equal(t, "assistant", c.Message.Role)
	comp := ts.complete(t, map[string]any{"prompt": ids, "max_tokens": 12, "temperature": 0, "logprobs": 3})
	require.Equal(t, comp.Choices[0].Text, c.Message.Content)
	require.Equal(t, *comp.Choices[0].FinishReason, c.FinishReason)
	require.Equal(t, comp.Usage.PromptTokens, resp.Usage.PromptTokens)
	require.Equal(t, comp.Usage.CompletionTokens, resp.Usage.CompletionTokens)
	require.Equal(t, comp.Choices[0].Logprobs.TokenIDs, c.TokenIDs)
	require.Equal(t, comp.Choices[0].Logprobs.TokenIDs, c.Logprobs.TokenIDs)
	require.Equal(t, []float64(comp.Choices[0].Logprobs.TokenLogprobs), logprobValues(c.Logprobs))
	require.Len(t, c.Logprobs.Content, len(c.TokenIDs))
	for i, e := range c.Logprobs.Content {
		require.Len(t, e.TopLogprobs, 3)
		piece := ts.model.Tokenizer.Piece(c.TokenIDs[i])
		require.Len(t, e.Bytes, len(piece))
		for j := range piece {
			require.Equal(t, int(piece[j]), e.Bytes[j])
		}
		require.Equal(t, c.Logprobs.TopLogprobsIDs[i][0].Logprob, e.TopLogprobs[0].Logprob)
		require.GreaterOrEqual(t, e.TopLogprobs[0].Logprob, e.Logprob)
	}
}

func logprobValues(lp *ChatLogprobs) []float64 {
	var out []float64
	for _, e := range lp.Content {
		out = append(out, e.Logprob)
	}
	return out
}

// The streamed chunks (role first, then one per token, finish_reason last, usage at the end
// with include_usage) add up to the whole response, for every choice of n.
func TestChatStreamAddsUpToTheResponse(t *testing.T) {
	ts := start(t, chatShapeModel, engine.Config{BlockSize: 8}, Options{})
	body := map[string]any{"messages": userMessages("Hi"), "max_tokens": 10, "n": 2, "seed": 5, "temperature": 1}
	whole := ts.chat(t, body)
	require.Len(t, whole.Choices, 2)

	body["stream"] = true
	body["stream_options"] = map[string]any{"include_usage": true}
	body["return_token_ids"] = true
	status, out := ts.post(t, "/v1/chat/completions", body)
	require.Equal(t, http.StatusOK, status, string(out))
	events := sseEvents(t, out)
	require.Equal(t, "[DONE]", events[len(events)-1])
	texts, roles, finish := map[int]string{}, map[int]int{}, map[int]string{}
	var usage *Usage
	var promptIDs []int
	for _, ev := range events[:len(events)-1] {
		var ch ChatChunk
		require.NoError(t, json.Unmarshal([]byte(ev), &ch), ev)
		require.Equal(t, "chat.completion.chunk", ch.Object)
		if ch.PromptTokenIDs != nil {
			require.Nil(t, promptIDs, "prompt_token_ids come once")
			promptIDs = ch.PromptTokenIDs
		}
		if ch.Usage != nil {
			require.Empty(t, ch.Choices)
			usage = ch.Usage
			continue
		}
		require.Len(t, ch.Choices, 1)
		c := ch.Choices[0]
		require.Empty(t, finish[c.Index], "no chunk after a choice's finish_reason")
		if c.Delta.Role != "" {
			require.Equal(t, "assistant", c.Delta.Role)
			require.Empty(t, texts[c.Index], "the role comes first")
			roles[c.Index]++
			continue
		}
		require.Len(t, c.TokenIDs, 1)
		texts[c.Index] += c.Delta.Content
		if c.FinishReason != nil {
			finish[c.Index] = *c.FinishReason
		}
	}
	require.NotEmpty(t, promptIDs)
	for i, c := range whole.Choices {
		require.Equal(t, 1, roles[i])
		require.Equal(t, c.Message.Content, texts[i], "choice %d", i)
		require.Equal(t, c.FinishReason, finish[i])
	}
	require.NotNil(t, usage)
	require.Equal(t, whole.Usage.CompletionTokens, usage.CompletionTokens)
}

// The second request of a conversation (the first exchange, then a new message) reports
// the history's full blocks as cached tokens.
func TestChatSecondTurnReusesTheHistory(t *testing.T) {
	ts := start(t, chatShapeModel, engine.Config{BlockSize: 8}, Options{})
	first := ts.chat(t, map[string]any{"messages": userMessages("What is a cat?"), "max_tokens": 8, "temperature": 0})
	require.Zero(t, first.Usage.PromptTokensDetails.CachedTokens)
	reply := first.Choices[0].Message.Content
	second := ts.chat(t, map[string]any{"messages": userMessages("What is a cat?", reply, "And a dog?"), "max_tokens": 8, "temperature": 0})
	cached := second.Usage.PromptTokensDetails.CachedTokens
	require.GreaterOrEqual(t, cached, (first.Usage.PromptTokens-1)/8*8, "every full block of the first prompt is a hit")
	require.Less(t, cached, second.Usage.PromptTokens)
	// A different cache salt shares nothing.
	salted := ts.chat(t, map[string]any{"messages": userMessages("What is a cat?", reply, "And a dog?"), "max_tokens": 8, "temperature": 0, "cache_salt": "tenant-b"})
	require.Zero(t, salted.Usage.PromptTokensDetails.CachedTokens)
	require.Equal(t, second.Choices[0].Message.Content, salted.Choices[0].Message.Content)
}

func TestChatBadRequests(t *testing.T) {
	raising := chatShapeModel
	raising.Name = "tiny-chatml-one-exchange"
	raising.ChatTemplate = `{% if messages | length > 1 %}{{ raise_exception('Only one message, please.') }}{% endif %}` + chat.ChatML
	ts := start(t, raising, engine.Config{BlockSize: 8}, Options{})
	long := strings.Repeat("word ", 300)
	f, err := chat.NewFormatter(ts.model, chat.TemplateOptions{})
	require.NoError(t, err)
	_, longIDs, err := f.Prompt(chat.Values([]chat.Message{{Role: "user", Content: long}}), true)
	require.NoError(t, err)
	tooLong := fmt.Sprintf("the rendered conversation has %d tokens but the context holds 1024", len(longIDs))
	for _, tc := range []struct {
		name        string
		body        map[string]any
		param, code string
		msg         string
	}{
		{"template raises", map[string]any{"messages": userMessages("a", "b")}, "messages", "chat_template_error", "the model's chat template refused the conversation: Only one message, please."},
		{"too long", map[string]any{"messages": userMessages(long)}, "messages", "context_length_exceeded", tooLong},
		{"unknown role", map[string]any{"messages": []map[string]any{{"role": "wizard", "content": "x"}}}, "messages[0].role", "", `"wizard" is not a role`},
		{"non-string content", map[string]any{"messages": []map[string]any{{"role": "user", "content": 7}}}, "messages[0].content", "", "must be a string or an array of text parts"},
		{"image", map[string]any{"messages": []map[string]any{{"role": "user", "content": []map[string]any{{"type": "image_url", "image_url": map[string]any{"url": "http://x"}}}}}}, "messages[0].content[0]", "", "is an image"},
		{"empty", map[string]any{"messages": []any{}}, "messages", "", "is empty"},
		{"missing", map[string]any{"max_tokens": 3}, "messages", "", "is required"},
		{"tools", map[string]any{"messages": userMessages("a"), "tools": []map[string]any{{"type": "function"}}}, "tools", "unsupported_parameter", "executes no tools"},
		{"tool_choice", map[string]any{"messages": userMessages("a"), "tool_choice": "auto"}, "tool_choice", "unsupported_parameter", "executes no tools"},
		{"json mode", map[string]any{"messages": userMessages("a"), "response_format": map[string]any{"type": "json_object"}}, "response_format", "unsupported_parameter", "does not constrain"},
		{"top_logprobs alone", map[string]any{"messages": userMessages("a"), "top_logprobs": 2}, "top_logprobs", "", "needs logprobs: true"},
		{"two limits", map[string]any{"messages": userMessages("a"), "max_tokens": 3, "max_completion_tokens": 4}, "max_completion_tokens", "", "disagree"},
		{"max_tokens too many", map[string]any{"messages": userMessages("a"), "max_tokens": 5000}, "max_tokens", "context_length_exceeded", "exceed the context of 1024"},
		{"penalty", map[string]any{"messages": userMessages("a"), "presence_penalty": 1}, "presence_penalty", "unsupported_parameter", "no penalties"},
		{"wrong type", map[string]any{"messages": userMessages("a"), "max_tokens": "3"}, "max_tokens", "", "max_tokens must be an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ts.apiError(t, "/v1/chat/completions", tc.body, http.StatusBadRequest)
			require.Contains(t, e.Message, tc.msg)
			require.NotNil(t, e.Param)
			require.Equal(t, tc.param, *e.Param)
			if tc.code != "" {
				require.NotNil(t, e.Code)
				require.Equal(t, tc.code, *e.Code)
			}
		})
	}
	// The one exchange the template allows works, with text parts joined (greedy: a sampled
	// reply may end its turn before 3 tokens).
	resp := ts.chat(t, map[string]any{"messages": []map[string]any{{"role": "user", "content": []map[string]any{{"type": "text", "text": "a"}, {"type": "text", "text": "b"}}}}, "max_completion_tokens": 3, "temperature": 0})
	require.Equal(t, 3, resp.Usage.CompletionTokens)
}

// Without max_tokens a reply may run to the end of the context: the request is admitted
// and stops by itself (end-of-turn token or full context).
func TestChatDefaultMaxTokensIsTheContext(t *testing.T) {
	short := chatShapeModel
	short.Name, short.Context = "tiny-chatml-64", 64
	ts := start(t, short, engine.Config{BlockSize: 8}, Options{})
	resp := ts.chat(t, map[string]any{"messages": userMessages("Hi"), "temperature": 0, "ignore_eos": true})
	require.Equal(t, "length", resp.Choices[0].FinishReason)
	require.Equal(t, 64, resp.Usage.TotalTokens, "prompt + reply fill the context")
}
