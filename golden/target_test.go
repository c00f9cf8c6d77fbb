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
// strings, usage.prompt_tokens_details), of llama.cpp's llama-server c392e50 ("llamacpp":
// logprobs.content with ids, timings.prompt_n, n > 1 refused with its message, the token
// that completes a stop string left out, the BOS of an unrelated prompt reused on a miss),
// of later llama-server versions ("llamacpp-cache_n": timings.cache_n) or of a server that
// returns token text only ("text"). It tests the Target's HTTP side — waves, streams,
// cancellations, formats — on its own; cmd/kvref drives real engines (kvref serve,
// llama-server).
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
		N         int    `json:"n"`
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
	if s.format == "llamacpp" && body.N > 1 {
		http.Error(w, `{"error":{"code":500,"message":"Only one completion choice is allowed","type":"server_error"}}`, http.StatusInternalServerError)
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
			choices = append(choices, s.choice(c.Index, s.returned(c), finishReason(c)))
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
		longest = max(longest, len(s.returned(c)))
	}
	for i := range longest {
		for _, c := range gr.Choices {
			if steps := s.returned(c); i < len(steps) {
				send(map[string]any{"choices": []any{s.choice(c.Index, steps[i:i+1], "")}})
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
		final = append(final, s.choice(c.Index, nil, finishReason(c)))
	}
	send(map[string]any{"choices": final})
	send(s.response([]any{}, gr, cached))
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// finishReason is OpenAI's finish reason for kvref's.
func finishReason(c GoldenChoice) string {
	if c.FinishReason == "eos" || c.FinishReason == "stop" {
		return "stop"
	}
	return "length"
}

// returned is what the server returns of a continuation: llama-server leaves out the token
// that completes a stop string.
func (s *replayServer) returned(c GoldenChoice) []Step {
	if s.format == "llamacpp" && c.FinishReason == "stop" {
		return c.Steps[:len(c.Steps)-1]
	}
	return c.Steps
}

// choice renders steps in the server's format.
func (s *replayServer) choice(index int, steps []Step, finish string) map[string]any {
	c := map[string]any{"index": index, "text": "", "finish_reason": nil}
	if finish != "" {
		c["finish_reason"] = finish
	}
	if strings.HasPrefix(s.format, "llamacpp") {
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
	switch s.format {
	case "llamacpp":
		if cached == 0 {
			cached = 1 // a slot reuses the BOS of whatever prompt it held
		}
		resp["usage"] = map[string]any{"prompt_tokens": len(gr.PromptIDs)}
		resp["timings"] = map[string]any{"prompt_n": len(gr.PromptIDs) - cached, "predicted_n": 1}
	case "llamacpp-cache_n":
		resp["usage"] = map[string]any{"prompt_tokens": len(gr.PromptIDs)}
		resp["timings"] = map[string]any{"cache_n": cached, "prompt_n": len(gr.PromptIDs) - cached}
	default:
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
// with every expected hit observed (read from the evidence each format gives), the waves
// arrive together, the cancellations close connections, and the flush URL is called
// before every scenario. llama-server c392e50's refusal of n > 1 makes fork-partial-block
// unsupported (a JUnit skip) and its stop-string convention is accepted.
func TestTargetDrivesServersOfEachFormat(t *testing.T) {
	goldens := tinyDefaultGoldens(t)
	for _, tc := range []struct{ format, evidence string }{
		{"vllm", EvidenceCachedTokens}, {"llamacpp", EvidencePromptN}, {"llamacpp-cache_n", EvidenceCacheN},
	} {
		t.Run(tc.format, func(t *testing.T) {
			srv := &replayServer{format: tc.format, goldens: goldens}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			target := &Target{BaseURL: ts.URL + "/v1", FlushURL: ts.URL + "/reset_prefix_cache", StepDelay: time.Millisecond, CancelDelay: -1}
			cand, err := target.Run(context.Background(), goldens)
			require.NoError(t, err)
			require.Equal(t, "replay", target.Model, "discovered from GET /v1/models")
			rep, err := Verify(goldens, cand, VerifyOptions{Oracle: oracle(t)})
			require.NoError(t, err)
			for _, s := range rep.Scenarios {
				if tc.format == "llamacpp" && s.Class == "fork-partial-block" {
					require.Equal(t, StatusUnsupported, s.Status, "%+v", s.Failures)
					require.Equal(t, []Refusal{{Request: "A", Feature: FeatureN, Message: s.Unsupported[0].Message}}, s.Unsupported)
					require.Contains(t, s.Unsupported[0].Message, "Only one completion choice is allowed")
					continue
				}
				require.Equal(t, StatusPass, s.Status, "%s: %+v %v %v", s.Name, s.Failures, s.Vacuous, s.Notes)
				require.Equal(t, s.ExpectedHits, s.ObservedHits, s.Name)
				require.True(t, s.HitsReported)
				require.Equal(t, tc.evidence, s.HitEvidence, s.Name)
				if tc.format == "llamacpp" && s.Class == "stop-mid-block" {
					require.Contains(t, strings.Join(s.Notes, "\n"), "leaves out the token that completes the stop string")
				}
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
