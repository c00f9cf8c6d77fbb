package golden

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// replayServer is an OpenAI-compatible test server that answers each request with what a
// golden recorded for the same prompt, in the wire format of vLLM ("vllm": token_id:N
// strings, usage.prompt_tokens_details), of llama.cpp's llama-server ("llamacpp":
// logprobs.content with ids, timings.cache_n) or of a server that returns token text only
// ("text"). It tests the Target's HTTP side — waves, streams, cancellations, formats — on
// its own; the kvref server test in cmd/kvref drives a real engine.
type replayServer struct {
	format   string
	goldens  []*Golden
	mu       sync.Mutex
	inFlight int
	maxIn    int
	flushes  atomic.Int64
	cancels  atomic.Int64
}

// find returns the golden request named by the user field, if its prompt is the one sent.
func (s *replayServer) find(user string, prompt []int) *GoldenRequest {
	scenario, id, _ := strings.Cut(strings.TrimPrefix(user, "kvref-golden:"), "/")
	for _, g := range s.goldens {
		if g.Scenario.Name != scenario {
			continue
		}
		if r := g.Request(id); r != nil && slices.Equal(r.PromptIDs, prompt) {
			return r
		}
	}
	return nil
}

func (s *replayServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"id":"replay"}]}`)
		return
	case "/reset_prefix_cache":
		s.flushes.Add(1)
		return
	case "/v1/completions":
	default:
		http.NotFound(w, r)
		return
	}
	var body struct {
		Prompt    []int  `json:"prompt"`
		MaxTokens int    `json:"max_tokens"`
		Stream    bool   `json:"stream"`
		CacheSalt string `json:"cache_salt"`
		Model     string `json:"model"`
		User      string `json:"user"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Model != "replay" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	gr := s.find(body.User, body.Prompt)
	if gr == nil {
		http.Error(w, `{"error":{"message":"unknown prompt"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.inFlight++
	s.maxIn = max(s.maxIn, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	cached := gr.CachedTokens
	if body.CacheSalt != "" {
		cached = 0 // a distinct salt never hits
	}
	if !body.Stream {
		time.Sleep(20 * time.Millisecond) // let the whole wave arrive
		var choices []any
		for _, c := range gr.Choices {
			choices = append(choices, s.choice(c.Index, c.Steps, "length"))
		}
		json.NewEncoder(w).Encode(s.response(choices, gr, cached))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		flusher.Flush()
	}
	longest := 0
	for _, c := range gr.Choices {
		longest = max(longest, len(c.Steps))
	}
	for i := range longest {
		for _, c := range gr.Choices {
			if i < len(c.Steps) {
				send(map[string]any{"choices": []any{s.choice(c.Index, c.Steps[i:i+1], "")}})
			}
		}
		select {
		case <-r.Context().Done():
			s.cancels.Add(1)
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
	if gr.Cancelled {
		// The golden was cancelled here: wait for the client to do the same.
		select {
		case <-r.Context().Done():
			s.cancels.Add(1)
			return
		case <-time.After(2 * time.Second):
		}
	}
	var final []any
	for _, c := range gr.Choices {
		final = append(final, s.choice(c.Index, nil, "length"))
	}
	send(map[string]any{"choices": final})
	send(s.response([]any{}, gr, cached))
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// choice renders steps in the server's format.
func (s *replayServer) choice(index int, steps []Step, finish string) map[string]any {
	c := map[string]any{"index": index, "text": "", "finish_reason": nil}
	if finish != "" {
		c["finish_reason"] = finish
	}
	if s.format == "llamacpp" {
		content := []any{}
		for _, st := range steps {
			var top []any
			for _, t := range st.Top {
				top = append(top, map[string]any{"id": t.ID, "token": "x", "logprob": t.Logprob, "bytes": []int{120}})
			}
			content = append(content, map[string]any{"id": st.ID, "token": "x", "logprob": st.Logprob, "top_logprobs": top})
		}
		c["logprobs"] = map[string]any{"content": content}
		return c
	}
	tokens, lps, tops := []string{}, []float64{}, []map[string]float64{}
	for _, st := range steps {
		name := func(id int) string { return fmt.Sprintf("token_id:%d", id) }
		if s.format == "text" {
			name = func(id int) string { return fmt.Sprintf("t%d", id) }
		}
		tokens = append(tokens, name(st.ID))
		lps = append(lps, st.Logprob)
		top := map[string]float64{}
		for _, t := range st.Top {
			top[name(t.ID)] = t.Logprob
		}
		top[name(st.ID)] = st.Logprob // vLLM adds the sampled token
		tops = append(tops, top)
	}
	c["logprobs"] = map[string]any{"tokens": tokens, "token_logprobs": lps, "top_logprobs": tops, "text_offset": make([]int, len(steps))}
	return c
}

// response wraps choices with the usage (or timings) of the format.
func (s *replayServer) response(choices []any, gr *GoldenRequest, cached int) map[string]any {
	resp := map[string]any{"object": "text_completion", "choices": choices}
	if s.format == "llamacpp" {
		resp["usage"] = map[string]any{"prompt_tokens": len(gr.PromptIDs)}
		resp["timings"] = map[string]any{"cache_n": cached}
	} else {
		resp["usage"] = map[string]any{"prompt_tokens": len(gr.PromptIDs), "prompt_tokens_details": map[string]any{"cached_tokens": cached}}
	}
	return resp
}

func tinyDefaultGoldens(t *testing.T) []*Golden {
	var goldens []*Golden
	for _, sc := range tinySuite(t) {
		goldens = append(goldens, tinyGolden(t, sc.Name))
	}
	return goldens
}

// TestTargetDrivesServersOfEachFormat runs the whole tiny default suite against replay
// servers speaking vLLM's and llama-server's formats: everything passes teacher-forced
// with every expected hit observed, the waves arrive together, the cancellations close
// connections, and the flush URL is called before every scenario.
func TestTargetDrivesServersOfEachFormat(t *testing.T) {
	goldens := tinyDefaultGoldens(t)
	for _, format := range []string{"vllm", "llamacpp"} {
		t.Run(format, func(t *testing.T) {
			srv := &replayServer{format: format, goldens: goldens}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			target := &Target{BaseURL: ts.URL + "/v1", FlushURL: ts.URL + "/reset_prefix_cache", StepDelay: time.Millisecond}
			cand, err := target.Run(context.Background(), goldens)
			require.NoError(t, err)
			require.Equal(t, "replay", target.Model, "discovered from GET /v1/models")
			rep, err := Verify(goldens, cand, VerifyOptions{Oracle: oracle(t)})
			require.NoError(t, err)
			for _, s := range rep.Scenarios {
				require.Equal(t, StatusPass, s.Status, "%s: %+v %v", s.Name, s.Failures, s.Notes)
				require.Equal(t, s.ExpectedHits, s.ObservedHits, s.Name)
				require.True(t, s.HitsReported)
			}
			require.True(t, rep.Passed)
			require.GreaterOrEqual(t, srv.maxIn, 8, "block-boundary-lengths sends 8 requests in one wave")
			// The server notices a closed connection on its own schedule, after the client
			// has moved on: give it a moment on a loaded machine.
			require.Eventually(t, func() bool { return srv.cancels.Load() >= 2 }, 5*time.Second, 5*time.Millisecond,
				"cancel-mid-prefill and cancel-mid-decode close their connections (server saw %d)", srv.cancels.Load())
			require.Equal(t, int64(len(goldens)), srv.flushes.Load())
			for _, name := range []string{"cancel-mid-decode.f32", "cancel-mid-prefill.f32"} {
				require.True(t, cand.Scenarios[name].Requests["A"].Cancelled, name)
			}
		})
	}
}

// TestTargetControlRun: with --control every request carries its own cache_salt; a
// server that honours it reports no hits and the control passes.
func TestTargetControlRun(t *testing.T) {
	goldens := []*Golden{tinyGolden(t, "mixed-hits-misses.f32"), tinyGolden(t, "evict-then-rerequest.f32")}
	ts := httptest.NewServer(&replayServer{format: "vllm", goldens: goldens})
	defer ts.Close()
	target := &Target{BaseURL: ts.URL + "/v1", Control: true}
	cand, err := target.Run(context.Background(), goldens)
	require.NoError(t, err)
	require.True(t, cand.Control)
	rep, err := Verify(goldens, cand, VerifyOptions{})
	require.NoError(t, err)
	require.True(t, rep.Passed, "%+v", rep.Scenarios[0].Failures)
	require.Zero(t, rep.Scenarios[0].ObservedHits)
}

// TestTargetReportsUnusableServers: token text without ids is refused with advice, and a
// request the server rejects becomes that request's error.
func TestTargetReportsUnusableServers(t *testing.T) {
	goldens := []*Golden{tinyGolden(t, "mixed-hits-misses.f32")}
	ts := httptest.NewServer(&replayServer{format: "text", goldens: goldens})
	defer ts.Close()
	cand, err := (&Target{BaseURL: ts.URL + "/v1"}).Run(context.Background(), goldens)
	require.NoError(t, err)
	rep, err := Verify(goldens, cand, VerifyOptions{})
	require.NoError(t, err)
	s := rep.Scenarios[0]
	require.Equal(t, StatusFail, s.Status)
	require.Equal(t, KindError, s.Failures[0].Kind)
	require.Contains(t, s.Failures[0].Message, "--return-tokens-as-token-ids")

	cand, err = (&Target{BaseURL: ts.URL + "/v1", Model: "other"}).Run(context.Background(), goldens)
	require.NoError(t, err)
	rep, err = Verify(goldens, cand, VerifyOptions{})
	require.NoError(t, err)
	require.Contains(t, rep.Scenarios[0].Failures[0].Message, "400 Bad Request")

	_, err = (&Target{BaseURL: ts.URL + "/v1", FlushURL: ts.URL + "/nowhere"}).Run(context.Background(), goldens)
	require.ErrorContains(t, err, "flushing the cache")
}
