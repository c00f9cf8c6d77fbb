package golden

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"
)

// Target drives an OpenAI-compatible server (vLLM, SGLang, llama.cpp's llama-server,
// kvref serve, ...) through the scenarios of goldens and collects its answers as a
// candidate: every request goes to POST /completions with the golden's prompt token ids,
// temperature 0 (or the golden's seeded sampling for forks), logprobs = k and max_tokens;
// the requests of a wave are sent at the same moment; a cancellation closes the request's
// connection; a wait for k tokens streams the request.
type Target struct {
	BaseURL   string        // the API root, e.g. http://127.0.0.1:8000/v1
	Model     string        // model name to send ("": the first id of GET /models, if any)
	TopK      int           // log-probabilities per step to ask for (0: the golden's)
	Control   bool          // control run: send every request with its own cache_salt and cache_prompt false, and expect no cache hits
	FlushURL  string        // POSTed before each scenario and for flush events ("": not flushed, noted)
	StepDelay time.Duration // pause per scheduler step of a "steps" event (0: 20 ms)
	// CancelDelay is the pause after cancelling a request (0: 250 ms; negative: none): a
	// server notices a closed connection only when it next writes to it, and frees the
	// request's slot or blocks then; the scenario's next requests assume it has.
	CancelDelay time.Duration
	Timeout     time.Duration // per request (0: 10 minutes)
	Client      *http.Client  // nil: a client without timeout (requests are bounded by Timeout)
	Log         io.Writer     // progress lines (nil: none)
}

func (t *Target) client() *http.Client {
	if t.Client != nil {
		return t.Client
	}
	return &http.Client{}
}

func (t *Target) logf(format string, args ...any) {
	if t.Log != nil {
		fmt.Fprintf(t.Log, format+"\n", args...)
	}
}

// Run sends every golden's scenario to the server, one scenario after another, and
// returns the candidate. It fails only when the server cannot be used at all (unreachable,
// a flush URL that fails); a request the server rejects is recorded as that request's
// error.
func (t *Target) Run(ctx context.Context, goldens []*Golden) (*Candidate, error) {
	base := strings.TrimRight(t.BaseURL, "/")
	if t.Model == "" {
		t.Model = t.discoverModel(ctx, base)
	}
	c := NewCandidate(fmt.Sprintf("OpenAI-compatible server at %s (model %q)", base, t.Model))
	c.Control = t.Control
	for _, g := range goldens {
		t.logf("kvref verify: %s: %d requests", g.Scenario.Name, len(g.Requests))
		cs, err := t.runScenario(ctx, base, g)
		if err != nil {
			return nil, fmt.Errorf("golden: scenario %s on %s: %w", g.Scenario.Name, base, err)
		}
		c.Scenarios[g.Scenario.Name] = cs
	}
	return c, nil
}

// discoverModel returns the first model the server lists, or "".
func (t *Target) discoverModel(ctx context.Context, base string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/models", nil)
	if err != nil {
		return ""
	}
	resp, err := t.client().Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&list) != nil || len(list.Data) == 0 {
		return ""
	}
	return list.Data[0].ID
}

// flush POSTs the flush URL.
func (t *Target) flush(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.FlushURL, nil)
	if err != nil {
		return err
	}
	resp, err := t.client().Do(req)
	if err != nil {
		return fmt.Errorf("flushing the cache: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("flushing the cache: POST %s: %s: %s", t.FlushURL, resp.Status, bytes.TrimSpace(b))
	}
	return nil
}

// inflight is one request on its way.
type inflight struct {
	req    *GoldenRequest
	cancel context.CancelFunc
	done   chan struct{}
	// sent is closed once the whole request has been written to the server: a
	// cancellation before that would only abandon a request the server never saw.
	sent     chan struct{}
	sentOnce sync.Once
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced whenever tokens arrive
	result   CandidateRequest
}

// markSent records that the request has been written (or will never be).
func (f *inflight) markSent() { f.sentOnce.Do(func() { close(f.sent) }) }

// tokens returns how many tokens continuation 0 has so far, and a channel closed at the
// next change.
func (f *inflight) tokens() (int, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	if len(f.result.Choices) > 0 {
		n = len(f.result.Choices[0])
	}
	return n, f.changed
}

func (t *Target) runScenario(ctx context.Context, base string, g *Golden) (*CandidateScenario, error) {
	cs := &CandidateScenario{Name: g.Scenario.Name, Requests: map[string]*CandidateRequest{}}
	if t.FlushURL != "" {
		if err := t.flush(ctx); err != nil {
			return nil, err
		}
	}
	stream := map[string]bool{} // requests that must stream: waited for by tokens, or cancelled
	for _, e := range g.Scenario.Events {
		if e.Wait != nil && e.Wait.Tokens > 0 {
			stream[e.Wait.Request] = true
		}
		if e.Cancel != "" {
			stream[e.Cancel] = true
		}
	}
	live := map[string]*inflight{}
	var order []*inflight
	waitAll := func() {
		for _, f := range order {
			<-f.done
		}
	}
	defer func() {
		for _, f := range order {
			f.cancel()
		}
		waitAll()
	}()
	delay := t.StepDelay
	if delay <= 0 {
		delay = 20 * time.Millisecond
	}
	cancelDelay := t.CancelDelay
	switch {
	case cancelDelay == 0:
		cancelDelay = 250 * time.Millisecond
	case cancelDelay < 0:
		cancelDelay = 0
	}
	for _, e := range g.Scenario.Events {
		switch {
		case len(e.Submit) > 0:
			start := make(chan struct{})
			for _, r := range e.Submit {
				gr := g.Request(r.ID)
				if gr == nil {
					return nil, fmt.Errorf("the golden has no request %s", r.ID)
				}
				f := t.start(ctx, base, g, gr, stream[r.ID], start)
				live[r.ID] = f
				order = append(order, f)
			}
			close(start) // the whole wave leaves at once
		case e.Wait != nil && e.Wait.Request == "":
			waitAll()
		case e.Wait != nil:
			if err := waitFor(ctx, live[e.Wait.Request], e.Wait.Tokens); err != nil {
				return nil, err
			}
		case e.Cancel != "":
			f := live[e.Cancel]
			select { // the server must have the request before it can see it cancelled
			case <-f.sent:
			case <-f.done:
			}
			select {
			case <-f.done: // finished before the cancellation: nothing to cancel
			default:
				f.mu.Lock()
				f.result.Cancelled = true
				f.mu.Unlock()
				f.cancel()
				<-f.done
				time.Sleep(cancelDelay)
			}
		case e.Steps > 0:
			time.Sleep(time.Duration(e.Steps) * delay)
		case e.Flush:
			if t.FlushURL == "" {
				cs.Notes = appendOnce(cs.Notes, "the scenario flushes the cache, but the target has no flush URL (Target.FlushURL): the candidate's cache was not flushed")
				continue
			}
			waitAll()
			if err := t.flush(ctx); err != nil {
				return nil, err
			}
		}
	}
	waitAll()
	for _, f := range order {
		r := f.result
		cs.Requests[f.req.ID] = &r
	}
	return cs, nil
}

// waitFor returns when f has finished or, with tokens > 0, has that many tokens in its
// first continuation.
func waitFor(ctx context.Context, f *inflight, tokens int) error {
	for {
		n, changed := f.tokens()
		if tokens > 0 && n >= tokens {
			return nil
		}
		select {
		case <-f.done:
			return nil
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// start launches one request, which waits for start before sending.
func (t *Target) start(ctx context.Context, base string, g *Golden, gr *GoldenRequest, stream bool, start <-chan struct{}) *inflight {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	f := &inflight{req: gr, cancel: cancel, done: make(chan struct{}), sent: make(chan struct{}), changed: make(chan struct{}), result: CandidateRequest{ID: gr.ID}}
	body := t.body(g, gr, stream)
	go func() {
		defer close(f.done)
		defer f.markSent() // a request that failed before it was written is not waited for
		<-start
		err := t.send(rctx, base, body, stream, f)
		f.mu.Lock()
		defer f.mu.Unlock()
		if err != nil && !(f.result.Cancelled && errors.Is(err, context.Canceled)) {
			if isTransport(err) {
				f.result.Transport = err.Error()
				return
			}
			f.result.Error = err.Error()
			var se *serverError
			if errors.As(err, &se) && f.result.tokens() == 0 {
				f.result.Unsupported = refusedFeature(body, se.Message)
			}
		}
	}()
	return f
}

// body builds the request body for a golden request.
func (t *Target) body(g *Golden, gr *GoldenRequest, stream bool) completionRequest {
	k := t.TopK
	if k <= 0 {
		k = g.TopK
	}
	b := completionRequest{
		Model: t.Model, Prompt: gr.PromptIDs, MaxTokens: gr.MaxTokens, Logprobs: k, IgnoreEOS: gr.IgnoreEOS,
		Stop: gr.Stop, Stream: stream, ReturnTokensAsTokenIDs: true, User: "kvref-golden:" + g.Scenario.Name + "/" + gr.ID,
	}
	if gr.N > 1 {
		b.N = gr.N
	}
	if s := gr.Sampling; !s.Greedy() {
		b.Temperature = s.Temperature
		topP, minP, seed := min(max(s.TopP, 0), 1), s.MinP, s.Seed
		if topP == 0 {
			topP = 1
		}
		b.TopP, b.MinP, b.Seed = &topP, &minP, &seed
		if s.TopK > 0 {
			b.TopK = &s.TopK
		}
	}
	if stream {
		b.StreamOptions = map[string]any{"include_usage": true}
	}
	if gr.PromptSteps != nil {
		b.Echo, b.Logprobs = true, max(k, 1)
	}
	if t.Control {
		b.CacheSalt = fmt.Sprintf("kvref-control-%s-%s-%d", g.Scenario.Name, gr.ID, time.Now().UnixNano())
		b.CachePrompt = new(bool) // false
	}
	return b
}

// send performs the request and fills f.result as tokens arrive.
func (t *Target) send(ctx context.Context, base string, body completionRequest, stream bool, f *inflight) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { f.markSent() }})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/completions", bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	// One connection per request: a kept-alive connection that sits idle while a wave
	// waits can be closed by the server just as the next request reuses it ("server
	// closed idle connection", which Go does not retry for a POST), and llama-server
	// holds one of its few HTTP threads per idle connection.
	req.Close = true
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := t.client().Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return &serverError{Context: fmt.Sprintf("POST %s/completions: %s", base, resp.Status), Body: string(bytes.TrimSpace(b)), Message: errorMessage(b)}
	}
	if !stream {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		r, err := parseCompletion(b)
		if err != nil {
			return err
		}
		return f.add(r)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue // comments, event names, blank separators
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			return nil
		}
		r, err := parseCompletion(data)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err() // a line cut short by the cancellation
			}
			return err
		}
		if err := f.add(r); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return sc.Err()
}

// add merges a response or stream chunk into the request's result.
func (f *inflight) add(r *completionResponse) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range r.Choices {
		steps, err := c.steps()
		if err != nil {
			return err
		}
		if f.req.PromptSteps != nil && c.Index == 0 && f.result.PromptSteps == nil {
			steps = f.echoed(steps)
		}
		cur := f.result.choice(c.Index)
		for _, st := range steps {
			st.Step = len(*cur) // a stream's order is its step order
			*cur = append(*cur, st)
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			for len(f.result.FinishReasons) <= c.Index {
				f.result.FinishReasons = append(f.result.FinishReasons, "")
			}
			f.result.FinishReasons[c.Index] = *c.FinishReason
		}
	}
	if n, evidence := r.cacheEvidence(); n != nil {
		f.result.CachedTokens, f.result.CacheEvidence = n, evidence
	}
	if n := r.promptTokens(); n != nil {
		f.result.PromptTokens = n
	}
	close(f.changed)
	f.changed = make(chan struct{})
	return nil
}
