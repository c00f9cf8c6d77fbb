package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/tokenizer"
)

// TestTokenizeShapes: /tokenize and /detokenize answer llama-server's and vLLM's shapes
// with the ids a completion prompt gets, round-trip, parse special tokens unless told not
// to (per request, or by the server option), and render vLLM's messages as a chat request
// does.
func TestTokenizeShapes(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{})
	tok := ts.model.Tokenizer
	post := func(path string, body any) map[string]json.RawMessage {
		status, out := ts.post(t, path, body)
		require.Equal(t, http.StatusOK, status, string(out))
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(out, &m))
		return m
	}
	ids := func(raw json.RawMessage) []int {
		var out []int
		require.NoError(t, json.Unmarshal(raw, &out))
		return out
	}
	const text = "Hello,world" // the synthetic vocabulary has no "▁": a space would come back as one
	// llama-server: no BOS unless add_special.
	require.Equal(t, tok.EncodeSpecial(text, tokenizer.EncodeOptions{ParseSpecial: true}), ids(post("/tokenize", map[string]any{"content": text})["tokens"]))
	withBOS := ids(post("/tokenize", map[string]any{"content": text, "add_special": true})["tokens"])
	require.Equal(t, tok.EncodeSpecial(text, tokenizer.Prompt), withBOS)
	var pieces []TokenPiece
	require.NoError(t, json.Unmarshal(post("/tokenize", map[string]any{"content": text, "with_pieces": true})["tokens"], &pieces))
	require.Equal(t, string(tok.Piece(pieces[0].ID)), pieces[0].Piece)
	var content string
	require.NoError(t, json.Unmarshal(post("/detokenize", map[string]any{"tokens": withBOS})["content"], &content))
	require.Contains(t, content, text)

	// vLLM: BOS by default, count and max_model_len; /v1 too.
	v := post("/v1/tokenize", map[string]any{"model": ts.Model(), "prompt": text})
	require.Equal(t, withBOS, ids(v["tokens"]))
	require.JSONEq(t, "256", string(v["max_model_len"]))
	var prompt string
	require.NoError(t, json.Unmarshal(post("/detokenize", map[string]any{"model": ts.Model(), "tokens": withBOS})["prompt"], &prompt))
	require.Equal(t, content, prompt)
	chat := ts.chat(t, map[string]any{"messages": userMessages("Hi"), "max_tokens": 1, "return_token_ids": true})
	require.Equal(t, chat.PromptTokenIDs, ids(post("/tokenize", map[string]any{"model": ts.Model(), "messages": userMessages("Hi")})["tokens"]))

	// Special tokens: "<s>" is BOS when parsed, text otherwise.
	special := tok.TokenText(tok.BOS())
	require.Equal(t, []int{tok.BOS()}, ids(post("/tokenize", map[string]any{"content": special})["tokens"]))
	require.NotEqual(t, []int{tok.BOS()}, ids(post("/tokenize", map[string]any{"content": special, "parse_special": false})["tokens"]))
	literal := start(t, synth.Tiny, engine.Config{}, Options{TokenizeLiteral: true})
	status, out := literal.post(t, "/tokenize", map[string]any{"content": special})
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, string(out), `"tokens":[`+itoa(tok.BOS())+`]`)

	for _, c := range []struct {
		path string
		body any
		want string
	}{
		{"/tokenize", map[string]any{"text": "x"}, "Unrecognized request argument supplied: text"},
		{"/tokenize", map[string]any{}, "give content"},
		{"/detokenize", map[string]any{"tokens": []int{1, 99999}}, "tokens[1] = 99999 is outside the vocabulary"},
		{"/detokenize", map[string]any{}, "tokens is required"},
	} {
		e := ts.apiError(t, c.path, c.body, http.StatusBadRequest)
		require.Contains(t, e.Message, c.want)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
