package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
)

// corruptAtBlock arms the engine's pool so that, when the one running sequence (in a fresh
// pool: its first block is block 0) gets its table entry index, which happens in the
// Reserve of the step that computes position index·B, one bit of its cached key at
// position 2 of layer 1 is flipped. Every logit computed from that step on reads the
// corrupted entry, so exactly index·B − p + 1 tokens (p: the prompt's length) were sampled
// clean; that count is returned. The hook runs on the engine loop inside Reserve, so no
// step can slip by between checking and corrupting, however fast the model.
func (ts *testServer) corruptAtBlock(t *testing.T, p, index int) int {
	t.Helper()
	b := ts.eng.Pool().Config().BlockSize
	require.Greater(t, index*b, p, "the corrupted block must come after the prompt")
	require.NoError(t, ts.do(context.Background(), func() {
		done := false
		ts.eng.Pool().SetObserver(func(ev kvcache.Event) {
			if !done && ev.Kind == kvcache.Allocated && ev.Index == index {
				ts.eng.Pool().KRow(1, 0, 2)[5] ^= 0x40
				done = true
			}
		})
	}))
	return index*b - p + 1
}

// TestCheckStreamsNoUnverifiedToken is the strict --check contract through the server: a
// cache entry corrupted mid-request is found, and the stream carries exactly the tokens
// sampled before the corruption (each the clean run's), then an error event and [DONE];
// the same request without streaming gets an error and no text.
func TestCheckStreamsNoUnverifiedToken(t *testing.T) {
	prompt := []int{1, 10, 20, 30, 40, 50}
	const n = 60
	m := loadShape(t, synth.Tiny)
	cfg := engine.Config{BlockSize: 4}
	_, clean := generate(t, m, cfg, engine.Request{Prompt: prompt, MaxTokens: n, IgnoreEOS: true, Check: true})
	require.Len(t, clean, n)
	body := map[string]any{"prompt": prompt, "max_tokens": n, "temperature": 0, "ignore_eos": true, "logprobs": 0}

	// post sends the request from another goroutine, so that the test can corrupt the
	// cache while it runs.
	type reply struct {
		status int
		body   []byte
	}
	post := func(ts *testServer, req map[string]any) <-chan reply {
		done := make(chan reply, 1)
		go func() {
			b, _ := json.Marshal(req)
			resp, err := http.Post(ts.URL+"/v1/completions", "application/json", bytes.NewReader(b))
			if err != nil {
				done <- reply{}
				return
			}
			defer resp.Body.Close()
			out, _ := io.ReadAll(resp.Body)
			done <- reply{resp.StatusCode, out}
		}()
		return done
	}

	t.Run("stream", func(t *testing.T) {
		ts := startModel(t, m, cfg, Options{Check: true})
		stream := map[string]any{"stream": true}
		for k, v := range body {
			stream[k] = v
		}
		sampled := ts.corruptAtBlock(t, len(prompt), 3)
		done := post(ts, stream)
		r := <-done
		require.Equal(t, http.StatusOK, r.status)
		events := sseEvents(t, r.body)
		require.Equal(t, "[DONE]", events[len(events)-1])
		var ids []int
		for _, ev := range events[:len(events)-2] {
			var chunk CompletionResponse
			require.NoError(t, json.Unmarshal([]byte(ev), &chunk), ev)
			for _, ch := range chunk.Choices {
				ids = append(ids, ch.Logprobs.TokenIDs...)
			}
		}
		var final ErrorResponse
		require.NoError(t, json.Unmarshal([]byte(events[len(events)-2]), &final))
		require.Contains(t, final.Error.Message, "check failed")
		require.Len(t, ids, sampled, "exactly the tokens sampled before the corruption are streamed")
		for i, id := range ids {
			require.Equal(t, clean[i].ID, id, "token %d", i)
		}
	})

	t.Run("whole response", func(t *testing.T) {
		ts := startModel(t, m, cfg, Options{Check: true})
		ts.corruptAtBlock(t, len(prompt), 3)
		done := post(ts, body)
		r := <-done
		require.Equal(t, http.StatusInternalServerError, r.status, string(r.body))
		e := decodeError(t, r.body)
		require.Contains(t, e.Message, "check failed")
		require.NotContains(t, string(r.body), `"choices"`)
	})
}

// TestNonFiniteLogitsAreAnErrorNotNaN: a model whose weights produce NaN logits gets an
// OpenAI-shaped error, never a 500 "json: unsupported value: NaN" nor a streaming 200 with an
// empty body.
func TestNonFiniteLogitsAreAnErrorNotNaN(t *testing.T) {
	m, err := synth.Tiny.Model() // its own copy: the weights are changed
	require.NoError(t, err)
	wq := m.Weights.Layers[0].Wq
	bad := make([]float32, wq.Rows*wq.Cols)
	for i := range bad {
		bad[i] = float32(math.NaN())
	}
	m.Weights.Layers[0].Wq, err = model.NewMatrixF32(wq.Name, wq.Rows, wq.Cols, bad)
	require.NoError(t, err)
	ts := startModel(t, m, engine.Config{}, Options{})
	body := map[string]any{"prompt": []int{1, 5, 6}, "max_tokens": 4, "logprobs": 2}
	e := ts.apiError(t, "/v1/completions", body, http.StatusInternalServerError)
	require.Contains(t, e.Message, "non-finite logit")

	body["stream"] = true
	status, out := ts.post(t, "/v1/completions", body)
	require.Equal(t, http.StatusOK, status)
	events := sseEvents(t, out)
	require.Equal(t, []string{"[DONE]"}, events[len(events)-1:])
	require.Len(t, events, 2, "an error event, then [DONE]: %q", out)
	require.Contains(t, events[0], "non-finite logit")
	require.True(t, json.Valid([]byte(events[0])))
}
