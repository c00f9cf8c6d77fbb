package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model/synth"
)

func TestModels(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{})
	status, out := ts.get(t, "/v1/models")
	require.Equal(t, http.StatusOK, status)
	var list ModelList
	require.NoError(t, json.Unmarshal(out, &list))
	require.Equal(t, "list", list.Object)
	require.Len(t, list.Data, 1)
	require.Equal(t, "synth:kvref-synthetic-tiny:seed7", list.Data[0].ID)
	require.Equal(t, "model", list.Data[0].Object)
	require.Equal(t, synth.Tiny.Context, list.Data[0].MaxModelLen)

	status, out = ts.get(t, "/v1/models/synth:kvref-synthetic-tiny:seed7")
	require.Equal(t, http.StatusOK, status, string(out))
	status, out = ts.get(t, "/v1/models/gpt-4")
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "model_not_found", *decodeError(t, out).Code)

	require.Equal(t, "stories260K.gguf", ModelName("/home/me/.cache/kvref/stories260K.gguf"))
	require.Equal(t, "stories260K", ModelName("builtin:stories260K"))
	require.Equal(t, "synth:default", ModelName("synth:default"))

	named := start(t, synth.Tiny, engine.Config{}, Options{ModelName: "tiny"})
	_, out = named.get(t, "/v1/models")
	require.NoError(t, json.Unmarshal(out, &list))
	require.Equal(t, "tiny", list.Data[0].ID)
	resp := named.complete(t, map[string]any{"model": "tiny", "prompt": "x", "max_tokens": 1})
	require.Equal(t, "tiny", resp.Model)
	named.apiError(t, "/v1/completions", map[string]any{"model": "stories260K", "prompt": "x"}, http.StatusNotFound)
}

// TestGreedyMatchesGenerate: temperature 0 gives engine.Generate's greedy ids, the
// log-probabilities are the float64 log-softmax of the same logits, and the top-k lists are
// sorted and consistent with the chosen tokens.
func TestGreedyMatchesGenerate(t *testing.T) {
	for _, shape := range []synth.Shape{synth.Tiny, synth.Default} {
		t.Run(shape.Name, func(t *testing.T) {
			ts := start(t, shape, engine.Config{}, Options{})
			const prompt, n, k = "Once upon a time", 24, 5
			resp := ts.complete(t, map[string]any{
				"prompt": prompt, "max_tokens": n, "temperature": 0, "ignore_eos": true, "logprobs": k,
			})
			ids := ts.model.Tokenizer.Encode(prompt, true)
			want, toks := generate(t, ts.model, engine.Config{}, engine.Request{Prompt: ids, MaxTokens: n, IgnoreEOS: true})

			require.Len(t, resp.Choices, 1)
			c := resp.Choices[0]
			require.Equal(t, 0, c.Index)
			require.Equal(t, "length", *c.FinishReason)
			require.Equal(t, viaJSON(t, want.Texts[0]), c.Text)
			require.Equal(t, Usage{PromptTokens: len(ids), CompletionTokens: n, TotalTokens: len(ids) + n}, *resp.Usage)

			lp := c.Logprobs
			require.NotNil(t, lp)
			require.Equal(t, want.Outputs[0], lp.TokenIDs)
			for _, field := range []int{len(lp.Tokens), len(lp.TokenLogprobs), len(lp.TopLogprobs), len(lp.TextOffset), len(lp.TopLogprobsIDs)} {
				require.Equal(t, n, field)
			}
			offset := 0
			for i, tok := range toks {
				ref := refLogprobs(tok.Logits)
				require.Equal(t, ref[tok.ID], lp.TokenLogprobs[i], "step %d", i)
				top := lp.TopLogprobsIDs[i]
				require.Len(t, top, k)
				require.Equal(t, tok.ID, top[0].ID, "greedy picks the most likely token")
				require.Equal(t, lp.TokenLogprobs[i], top[0].Logprob)
				for j, e := range top {
					require.Equal(t, ref[e.ID], e.Logprob)
					if j > 0 {
						prev := top[j-1]
						require.True(t, prev.Logprob > e.Logprob || prev.Logprob == e.Logprob && prev.ID < e.ID, "step %d: top list not sorted: %v", i, top)
					}
				}
				// OpenAI's dict: the same tokens, in the same order, as text.
				piece := string(ts.model.Tokenizer.Piece(tok.ID))
				require.Equal(t, viaJSON(t, piece), lp.Tokens[i])
				require.Equal(t, viaJSON(t, piece), lp.TopLogprobs[i][0].Token)
				require.Equal(t, lp.TokenLogprobs[i], lp.TopLogprobs[i][0].Logprob)
				require.Equal(t, charIndex([]byte(want.Texts[0]), offset), lp.TextOffset[i], "step %d", i)
				offset += len(piece)
			}
			checkTopIsTop(t, toks, lp, k)
		})
	}
}

// charIndex is the index of the character holding byte b of text, as a client sees the text
// after JSON (an invalid byte becomes one U+FFFD): the test's own count, through the
// standard library's JSON and strings.
func charIndex(text []byte, b int) int {
	i := 0
	for pos := range string(text) { // ranging over a string steps one rune (or invalid byte) at a time
		if pos > b {
			return i - 1
		}
		i++
	}
	if b < len(text) {
		return i - 1
	}
	return i
}

// checkTopIsTop requires that no token outside each top-k list is more likely than the
// list's last entry.
func checkTopIsTop(t *testing.T, toks []engine.Token, lp *Logprobs, k int) {
	t.Helper()
	for i, tok := range toks {
		ref := refLogprobs(tok.Logits)
		in := map[int]bool{}
		for _, e := range lp.TopLogprobsIDs[i] {
			in[e.ID] = true
		}
		last := lp.TopLogprobsIDs[i][k-1]
		for id, v := range ref {
			if !in[id] {
				require.True(t, v < last.Logprob || v == last.Logprob && id > last.ID, "step %d: token %d (%g) belongs in the top %d", i, id, v, k)
			}
		}
	}
}

// TestPromptForms: text, token ids, and the one-element array forms give the same tokens.
func TestPromptForms(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{})
	text := "The cache is the product."
	ids := ts.model.Tokenizer.Encode(text, true)
	base := map[string]any{"max_tokens": 12, "temperature": 0.8, "seed": 11, "ignore_eos": true, "logprobs": 1}
	with := func(prompt any) map[string]any {
		b := map[string]any{"prompt": prompt}
		for k, v := range base {
			b[k] = v
		}
		return b
	}
	want := ts.complete(t, with(text))
	for _, prompt := range []any{ids, []any{text}, []any{ids}} {
		got := ts.complete(t, with(prompt))
		require.Equal(t, want.Choices, got.Choices, "prompt %v", prompt)
		require.Equal(t, len(ids), got.Usage.PromptTokens)
	}
	// Ids are taken literally: without BOS the continuation differs.
	got := ts.complete(t, with(ids[1:]))
	require.Equal(t, len(ids)-1, got.Usage.PromptTokens)
}

// TestBatchedPrompts: an array of prompts with n choices each gives len × n choices, choice
// j·n + q being prompt j's continuation q, each as if sent alone.
func TestBatchedPrompts(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{})
	prompts := []string{"alpha", "beta gamma", "delta"}
	body := func(prompt any) map[string]any {
		return map[string]any{"prompt": prompt, "n": 2, "max_tokens": 10, "seed": 5, "ignore_eos": true, "logprobs": 2}
	}
	resp := ts.complete(t, body(prompts))
	require.Len(t, resp.Choices, len(prompts)*2)
	total := 0
	for j, p := range prompts {
		alone := ts.complete(t, body(p))
		total += alone.Usage.PromptTokens
		for q := range 2 {
			want := alone.Choices[q]
			want.Index = j*2 + q
			require.Equal(t, want, resp.Choices[j*2+q], "prompt %d choice %d", j, q)
		}
	}
	require.Equal(t, total, resp.Usage.PromptTokens)
	require.Equal(t, len(prompts)*2*10, resp.Usage.CompletionTokens)
}

// TestCachedTokens: a second request sharing a 40-token prefix reuses its two full blocks.
func TestCachedTokens(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{BlockSize: 16}, Options{})
	prefix := strings.Repeat("abcdefghij", 4) // the byte-level vocabulary: one token per byte
	first := ts.complete(t, map[string]any{"prompt": prefix + "|one", "max_tokens": 4, "temperature": 0})
	require.Equal(t, 45, first.Usage.PromptTokens, "BOS + 44 bytes")
	require.Zero(t, first.Usage.PromptTokensDetails.CachedTokens)
	second := ts.complete(t, map[string]any{"prompt": prefix + "|two", "max_tokens": 4, "temperature": 0})
	require.Equal(t, 32, second.Usage.PromptTokensDetails.CachedTokens, "BOS + 41 shared tokens fill two blocks of 16")
	st := ts.stats(t)
	require.EqualValues(t, 32, st.Cache.PrefixHitTokens)
	require.Zero(t, st.Cache.BlocksUsed)
}

// TestParallelSamplingWithSeed: n = 2 gives two different continuations, the first of which
// is the n = 1 continuation with the same seed, and the same seed gives the same answer.
func TestParallelSamplingWithSeed(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{})
	body := map[string]any{"prompt": "Two roads", "n": 2, "max_tokens": 16, "temperature": 1, "seed": 1234, "ignore_eos": true, "logprobs": 0}
	a := ts.complete(t, body)
	require.Len(t, a.Choices, 2)
	require.Equal(t, 0, a.Choices[0].Index)
	require.Equal(t, 1, a.Choices[1].Index)
	require.NotEqual(t, a.Choices[0].Logprobs.TokenIDs, a.Choices[1].Logprobs.TokenIDs)
	require.Equal(t, 32, a.Usage.CompletionTokens)

	b := ts.complete(t, body)
	require.Equal(t, a.Choices, b.Choices)

	body["n"] = 1
	one := ts.complete(t, body)
	require.Equal(t, a.Choices[0], one.Choices[0])
	// logprobs 0: no top list, only the chosen token in OpenAI's dict.
	require.Empty(t, one.Choices[0].Logprobs.TopLogprobsIDs[0])
	require.Len(t, one.Choices[0].Logprobs.TopLogprobs[0], 1)

	body["seed"] = 99
	other := ts.complete(t, body)
	require.NotEqual(t, a.Choices[0].Logprobs.TokenIDs, other.Choices[0].Logprobs.TokenIDs)
}

// TestStopStringsAndTokens: a stop string spanning tokens cuts the text before it (in the
// response and in the stream, which must not leak its first bytes), and a stop token ends
// generation after it.
func TestStopStringsAndTokens(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{}, Options{})
	base := map[string]any{"prompt": "Once upon a time", "max_tokens": 48, "temperature": 0, "ignore_eos": true, "logprobs": 0}
	full := ts.complete(t, base).Choices[0]
	ids := full.Logprobs.TokenIDs
	pieces := make([][]byte, len(ids))
	for i, id := range ids {
		pieces[i] = ts.model.Tokenizer.Piece(id)
	}
	// A stop string of two consecutive printable ASCII tokens, from the fourth token on.
	at := -1
	for i := 3; i+1 < len(ids); i++ {
		if printable(pieces[i]) && printable(pieces[i+1]) {
			at = i
			break
		}
	}
	require.GreaterOrEqual(t, at, 0, "the greedy output has no two printable ASCII tokens in a row")
	stop := string(pieces[at]) + string(pieces[at+1])
	all := bytes.Join(pieces, nil)
	cut := bytes.Index(all, []byte(stop))
	end := 0 // tokens up to the one that completes the first match
	for n := 0; n < cut+len(stop); end++ {
		n += len(pieces[end])
	}
	wantText := viaJSON(t, string(all[:cut]))

	body := clone(base)
	body["stop"] = []string{"never-appears", stop}
	got := ts.complete(t, body).Choices[0]
	require.Equal(t, "stop", *got.FinishReason)
	require.Equal(t, wantText, got.Text)
	require.Equal(t, ids[:end], got.Logprobs.TokenIDs)

	body["stream"] = true
	text, chunks := streamText(t, ts, body)
	require.Equal(t, wantText, text)
	require.Len(t, chunks, end)
	require.Equal(t, "stop", *chunks[len(chunks)-1].Choices[0].FinishReason)

	body = clone(base)
	body["stop"] = stop // a plain string
	require.Equal(t, wantText, ts.complete(t, body).Choices[0].Text)

	body = clone(base)
	body["stop_token_ids"] = []int{ids[5]}
	got = ts.complete(t, body).Choices[0]
	first := 0
	for ids[first] != ids[5] {
		first++
	}
	require.Equal(t, "stop", *got.FinishReason)
	require.Equal(t, ids[:first+1], got.Logprobs.TokenIDs)
}

func printable(b []byte) bool { return len(b) == 1 && b[0] >= 0x21 && b[0] < 0x7f }

func clone(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// streamText runs a streaming request and returns the concatenated text and the token
// chunks (one per token), checking the stream's shape on the way.
func streamText(t *testing.T, ts *testServer, body map[string]any) (string, []CompletionResponse) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(ts.URL+"/v1/completions", "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	var raw bytes.Buffer
	_, err = raw.ReadFrom(resp.Body)
	require.NoError(t, err)
	events := sseEvents(t, raw.Bytes())
	require.Equal(t, "[DONE]", events[len(events)-1])
	var text strings.Builder
	var chunks []CompletionResponse
	for _, ev := range events[:len(events)-1] {
		var c CompletionResponse
		require.NoError(t, json.Unmarshal([]byte(ev), &c), ev)
		require.Equal(t, "text_completion", c.Object)
		if len(c.Choices) == 0 {
			require.NotNil(t, c.Usage, "a chunk without choices is the usage chunk")
			continue
		}
		require.Len(t, c.Choices, 1)
		text.WriteString(c.Choices[0].Text)
		chunks = append(chunks, c)
	}
	return text.String(), chunks
}

// TestStream: the stream is well-formed SSE, one chunk per token ending with [DONE], and
// carries the same text, ids and logprobs as the non-streamed response.
func TestStream(t *testing.T) {
	ts := start(t, synth.Default, engine.Config{}, Options{})
	body := map[string]any{"prompt": "Streaming", "max_tokens": 20, "temperature": 0.7, "seed": 3, "ignore_eos": true, "logprobs": 3, "n": 2}
	want := ts.complete(t, body)

	body["stream"] = true
	body["stream_options"] = map[string]any{"include_usage": true}
	b, _ := json.Marshal(body)
	resp, err := http.Post(ts.URL+"/v1/completions", "application/json", bytes.NewReader(b))
	require.NoError(t, err)
	defer resp.Body.Close()
	var raw bytes.Buffer
	_, err = raw.ReadFrom(resp.Body)
	require.NoError(t, err)
	events := sseEvents(t, raw.Bytes())
	require.Equal(t, "[DONE]", events[len(events)-1])
	require.Len(t, events, 2*20+2, "40 token chunks, the usage chunk, [DONE]")

	texts := make([]strings.Builder, 2)
	lps := []*Logprobs{newLogprobs(), newLogprobs()}
	finish := make([]*string, 2)
	var id string
	for i, ev := range events[:2*20] {
		var c CompletionResponse
		require.NoError(t, json.Unmarshal([]byte(ev), &c))
		require.Nil(t, c.Usage)
		if id == "" {
			id = c.ID
		}
		require.Equal(t, id, c.ID, "every chunk has the completion's id")
		require.Len(t, c.Choices, 1)
		ch := c.Choices[0]
		require.Nil(t, finish[ch.Index], "chunk %d after the choice finished", i)
		finish[ch.Index] = ch.FinishReason
		texts[ch.Index].WriteString(ch.Text)
		l := ch.Logprobs
		require.Len(t, l.TokenIDs, 1)
		lps[ch.Index].Tokens = append(lps[ch.Index].Tokens, l.Tokens...)
		lps[ch.Index].TokenLogprobs = append(lps[ch.Index].TokenLogprobs, l.TokenLogprobs...)
		lps[ch.Index].TopLogprobs = append(lps[ch.Index].TopLogprobs, l.TopLogprobs...)
		lps[ch.Index].TextOffset = append(lps[ch.Index].TextOffset, l.TextOffset...)
		lps[ch.Index].TokenIDs = append(lps[ch.Index].TokenIDs, l.TokenIDs...)
		lps[ch.Index].TopLogprobsIDs = append(lps[ch.Index].TopLogprobsIDs, l.TopLogprobsIDs...)
	}
	for q := range 2 {
		require.Equal(t, want.Choices[q].Text, texts[q].String())
		require.Equal(t, want.Choices[q].Logprobs, lps[q])
		require.Equal(t, "length", *finish[q])
	}
	var usage CompletionResponse
	require.NoError(t, json.Unmarshal([]byte(events[2*20]), &usage))
	require.Empty(t, usage.Choices)
	require.Equal(t, want.Usage, usage.Usage)
}

// TestCancelFreesBlocks: when the client of a long streaming request goes away, the request
// is cancelled and its blocks are freed at once.
func TestCancelFreesBlocks(t *testing.T) {
	ts := start(t, synth.Default, engine.Config{BlockSize: 16}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, _ := json.Marshal(map[string]any{"prompt": "a long story", "max_tokens": 2000, "ignore_eos": true, "stream": true})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/completions", bytes.NewReader(b))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	for range 3 {
		readEvent(t, r)
	}
	st := ts.stats(t)
	require.Equal(t, 1, st.Running)
	require.Positive(t, st.Cache.BlocksUsed)

	cancel()
	require.Eventually(t, func() bool {
		st := ts.stats(t)
		return st.Running == 0 && st.Cache.BlocksUsed == 0
	}, 10*time.Second, 5*time.Millisecond, "the cancelled request's blocks were not freed")
	st = ts.stats(t)
	require.EqualValues(t, 1, st.Cancelled)
	require.Less(t, st.GeneratedTokens, int64(2000), "the request must have been cut short")

	// The server goes on serving.
	require.Len(t, ts.complete(t, map[string]any{"prompt": "after", "max_tokens": 3}).Choices, 1)

	// A client waiting for a whole (non-streamed) response that gives up is noticed too.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	b, _ = json.Marshal(map[string]any{"prompt": "another long story", "max_tokens": 2000, "ignore_eos": true, "n": 2})
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/v1/completions", bytes.NewReader(b))
	require.NoError(t, err)
	failed := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		failed <- err
	}()
	require.Eventually(t, func() bool { return ts.stats(t).Cache.BlocksUsed > 0 }, 10*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-failed, context.Canceled)
	require.Eventually(t, func() bool {
		st := ts.stats(t)
		return st.Running == 0 && st.Cache.BlocksUsed == 0
	}, 10*time.Second, 5*time.Millisecond, "the cancelled request's blocks were not freed")
	require.EqualValues(t, 2, ts.stats(t).Cancelled)
}

// TestConcurrentMatchesSolo: eight sampled requests give exactly the same ids and
// log-probabilities alone and all at once (the engine is batch invariant).
func TestConcurrentMatchesSolo(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{BlockSize: 8}, Options{Scheduler: engine.SchedulerConfig{ChunkSize: 8}})
	const requests = 8
	bodies := make([]map[string]any, requests)
	for i := range bodies {
		bodies[i] = map[string]any{
			"prompt": fmt.Sprintf("Request %d: %s", i, strings.Repeat("shared prefix ", i%3+1)), "max_tokens": 24 + 4*i,
			"temperature": 0.9, "top_k": 40, "top_p": 0.95, "min_p": 0.01, "seed": 100 + i, "ignore_eos": true, "logprobs": 3,
		}
	}
	solo := make([]CompletionResponse, requests)
	for i, b := range bodies {
		solo[i] = ts.complete(t, b)
	}
	require.Equal(t, 1, ts.stats(t).Engine.SequencesMax, "the solo runs ran alone")

	together := make([]CompletionResponse, requests)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []string
	for i, b := range bodies {
		wg.Go(func() {
			out, _ := json.Marshal(b)
			resp, err := http.Post(ts.URL+"/v1/completions", "application/json", bytes.NewReader(out))
			if err != nil {
				mu.Lock()
				errs = append(errs, err.Error())
				mu.Unlock()
				return
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				mu.Lock()
				errs = append(errs, fmt.Sprintf("request %d: status %d", i, resp.StatusCode))
				mu.Unlock()
				return
			}
			if err := json.NewDecoder(resp.Body).Decode(&together[i]); err != nil {
				mu.Lock()
				errs = append(errs, err.Error())
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Empty(t, errs)
	for i := range bodies {
		require.Equal(t, solo[i].Choices, together[i].Choices, "request %d", i)
		require.Equal(t, solo[i].Usage.CompletionTokens, together[i].Usage.CompletionTokens)
	}
	st := ts.stats(t)
	t.Logf("batched: %d steps, up to %d sequences and %d tokens per step", st.Engine.Steps, st.Engine.SequencesMax, st.Engine.RowsMax)
	require.Greater(t, st.Engine.SequencesMax, 1, "the concurrent requests should have been batched")
	require.EqualValues(t, 2*requests, st.Finished)
	require.Zero(t, st.Cache.BlocksUsed)
}

// TestCacheSaltAndReset: a different cache_salt shares nothing, the same salt shares, and
// POST /reset_prefix_cache drops the cached blocks so that the next request misses.
func TestCacheSaltAndReset(t *testing.T) {
	ts := start(t, synth.Tiny, engine.Config{BlockSize: 16}, Options{})
	prefix := strings.Repeat("abcdefghij", 4)
	req := func(suffix, salt string) int {
		body := map[string]any{"prompt": prefix + suffix, "max_tokens": 2, "temperature": 0}
		if salt != "" {
			body["cache_salt"] = salt
		}
		return ts.complete(t, body).Usage.PromptTokensDetails.CachedTokens
	}
	require.Zero(t, req("|a", "tenant-1"))
	require.Zero(t, req("|b", "tenant-2"), "another salt must not see tenant-1's blocks")
	require.Zero(t, req("|c", ""), "no salt must not see salted blocks")
	require.Equal(t, 32, req("|d", "tenant-1"))
	status, out := ts.post(t, "/reset_prefix_cache", nil)
	require.Equal(t, http.StatusOK, status, string(out))
	require.Contains(t, string(out), "dropped_blocks")
	require.Zero(t, req("|e", "tenant-1"), "after a reset nothing is cached")
	status, _ = ts.get(t, "/reset_prefix_cache")
	require.Equal(t, http.StatusMethodNotAllowed, status)
}
