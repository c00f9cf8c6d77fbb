package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
)

// corruptWhenSampled waits, on the engine loop between steps, until the one running
// sequence (in a fresh pool: its first block is block 0) has sampled at least n tokens
// after a prompt of p tokens, then flips one bit of its cached key at position 2 of layer
// 1, and returns how many tokens it had sampled: every logit computed afterwards reads the
// corrupted entry. It returns 0 if the request ended first (finished, which closes
// finished): on a loaded machine this goroutine may not run at all while a short request
// does.
func (ts *testServer) corruptWhenSampled(t *testing.T, p, n int, finished <-chan struct{}) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-finished:
			return 0
		default:
		}
		sampled := 0
		require.NoError(t, ts.do(context.Background(), func() {
			computed := 0
			for _, b := range ts.eng.Pool.Blocks() {
				if b.Ref > 0 {
					computed += b.Filled
				}
			}
			if got := computed - p + 1; got >= n {
				ts.eng.Pool.KRow(1, 0, 2)[5] ^= 0x40
				sampled = got
			}
		}))
		if sampled > 0 {
			return sampled
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the request neither reached the step to corrupt nor ended")
	return 0
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
	post := func(ts *testServer, req map[string]any) (<-chan reply, <-chan struct{}) {
		done, finished := make(chan reply, 1), make(chan struct{})
		go func() {
			defer close(finished)
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
		return done, finished
	}
	// corrupted runs req on a fresh server until the corruption lands mid-request (a few
	// attempts: a request may end before this goroutine gets to run) and returns the reply
	// and the tokens sampled before the corruption.
	corrupted := func(t *testing.T, req map[string]any) (reply, int) {
		for range 10 {
			ts := startModel(t, m, cfg, Options{Check: true})
			done, finished := post(ts, req)
			if sampled := ts.corruptWhenSampled(t, len(prompt), 6, finished); sampled > 0 {
				return <-done, sampled
			}
		}
		t.Fatal("the request never reached the step to corrupt, in 10 attempts")
		return reply{}, 0
	}

	t.Run("stream", func(t *testing.T) {
		stream := map[string]any{"stream": true}
		for k, v := range body {
			stream[k] = v
		}
		r, sampled := corrupted(t, stream)
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
		r, _ := corrupted(t, body)
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
