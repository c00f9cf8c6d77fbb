// Package server is kvref's OpenAI-compatible HTTP server, backed by the engine's
// continuous-batching scheduler: every request shares one paged, prefix-caching KV cache.
//
// # Endpoints
//
// POST /v1/completions, POST /v1/chat/completions, GET /v1/models, POST /tokenize and
// /detokenize, POST /reset_prefix_cache, GET /health, GET /metrics and the cache view (GET /, /v1/cache,
// /v1/cache/events, /v1/plan). docs/serve.md in the repository is the one list of their
// fields, what each refuses, and the limits.
//
// Errors have OpenAI's shape, {"error": {"message", "type", "param", "code"}}: 400 for a
// request that is malformed, can never run (a prompt longer than the context, an id
// outside the vocabulary, a continuation the whole cache cannot hold) or asks for more than
// a limit allows, 404 for an unknown path or model, 405 for a wrong method, 408 for a body
// that stops arriving, 413 for a body too large, 429 when the engine's queue is full, 500
// for a failed --check, 503 while shutting down or past a request's deadline.
//
// # Limits
//
// No client can make the server do unbounded work or hold unbounded memory (see Limits):
// a request's prompts, choices, stop strings, stop ids, salt and body are bounded and
// checked before the work they cost; the engine takes at most MaxQueue choices; a text
// prompt too long for the context is refused before it is tokenized; connections have
// read, write and idle timeouts and requests a deadline; a stream whose client stops
// reading is cut off after StreamBacklog tokens per choice. The engine loop's work per step
// follows the step's batch, never the number of requests queued, so a flood of requests
// delays others by its share of the batch and no more.
//
// # How requests reach the engine
//
// The engine's Scheduler is not safe for concurrent use, so exactly one goroutine — the
// engine loop, started by Run — owns it. HTTP handlers never touch it: they send the loop
// small functions over a channel (submit these requests, cancel those, read the counters),
// and receive their tokens through a mailbox of their own that the loop fills after every
// step without ever waiting for a handler (a stream's mailbox is bounded: a client that
// stops reading has its requests cancelled). Tokens carry only the log-probabilities their
// request asked for, computed on the loop, never the logits. The loop steps while any
// request is waiting or running and blocks when idle. A handler whose client goes away (its request context is
// done) asks the loop to cancel its requests, which frees their cache blocks at once; full
// blocks stay in the prefix cache.
//
// Because every reduction in the engine has one fixed order, a request's tokens and
// log-probabilities do not depend on what else is running: the same request with the same
// seed gives the same bytes alone or in a batch of many.
//
// # Log-probabilities and text
//
// The logprobs of a completion are the log-softmax of the model's raw logits, computed in
// float64 in vocabulary order: logprob(i) = l_i − (m + ln Σ_j exp(l_j − m)), m = max_j l_j.
// They describe the model's own distribution, before temperature, top-k, top-p and min-p
// (vLLM's default "raw" logprobs). Token strings can be ambiguous (several byte tokens print
// as U+FFFD, and OpenAI's top_logprobs object keeps one of them), so each choice's logprobs
// also carry the exact ids: token_ids, and top_logprobs_ids, [[id, logprob], ...] best first,
// ties to the lower id. text_offset is the index of the character where each token begins,
// in the text as JSON carries it (an invalid UTF-8 byte is one U+FFFD).
//
// A stream sends one chunk per token, in order, but holds a token back while the text ends
// inside an unfinished UTF-8 character (its text and offset are not known yet) and holds
// back text that could be the start of a stop string (it must not be sent if the stop
// string completes), so the streamed text always adds up to the full response's.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kvref/kvref/chat"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
)

// Defaults of the API.
const (
	DefaultMaxTokens       = 16               // max_tokens when a request gives none (OpenAI's default)
	DefaultShutdownTimeout = 10 * time.Second // how long Serve waits for running requests when stopping
	MaxN                   = 128              // most choices per prompt (OpenAI's limit)
)

// Options configure a Server. The zero value serves with the defaults. The limits (see
// Limits and limits.go) bound what one client can make the server do; each has a flag on
// kvref serve.
type Options struct {
	// ModelName is the model's id in /v1/models and in responses; requests naming another
	// model get 404. Empty: ModelName of the model's source.
	ModelName string
	// Scheduler tunes continuous batching (tokens per step, prefill chunk size, ...).
	Scheduler engine.SchedulerConfig
	// Check sets engine.Request.Check on every request: the logits of every step are
	// recomputed by the cache-free reference (a window of up to engine.CheckWindow steps of
	// a sequence per reference pass) and must be bit-identical. A token is sent only once
	// its step has passed, so a stream arrives in bursts of up to engine.CheckWindow
	// tokens. A mismatch is an engine bug; it ends the request whose logits differ and no
	// other: with a 500 error, or, when streaming (the 200 is sent already), with an error
	// event after the tokens verified before the mismatch, then [DONE].
	Check bool
	// Limits bound requests, connections and the engine's queue; a zero field takes its
	// default.
	Limits
	// ShutdownTimeout is how long Serve lets running requests finish once its context is
	// done, before it ends them with an error (0: DefaultShutdownTimeout).
	ShutdownTimeout time.Duration
	// Logf, when set, receives the server's events (shutdown, engine failures), and one line
	// per completion request when LogRequests is set.
	Logf        func(format string, args ...any)
	LogRequests bool
	// Logger, when set, takes the server's events and the access log (one line per
	// response, accesslog.go) instead of Logf, as slog records with their time.
	Logger *slog.Logger
	// TokenizeLiteral makes /tokenize take special-token text ("<s>") in a text as plain
	// text unless the request sets parse_special (kvref serve --tokenize-parse-special=false);
	// by default it is parsed, as a completion prompt's is.
	TokenizeLiteral bool
	// Chat renders /v1/chat/completions conversations. nil: the model's chat template
	// (ChatML when it has none, as llama.cpp gives it).
	Chat *chat.Formatter
	// ViewHistory is how many recent events the cache view keeps for pages that open later,
	// and ViewRequests how many finished requests its requests panel keeps (0: the
	// defaults, cacheview.DefaultHistory and DefaultRequestHistory; < 0: none). history.go.
	ViewHistory, ViewRequests int
}

// ErrClosed is returned by Run after Close, and reported (as 503) to requests that arrive
// once the engine loop has stopped.
var ErrClosed = errors.New("server: closed")

// errRunning is returned by a second call of Run.
var errRunning = errors.New("server: Run called twice (one engine loop per server)")

// Server is an OpenAI-compatible HTTP front end to one engine. Create it with New, run its
// engine loop with Run (or serve a listener with Serve, which runs the loop itself), mount
// Handler on any HTTP server, and stop it with Close.
type Server struct {
	eng     *engine.Engine
	opts    Options
	model   string
	created int64 // Unix time New was called: the model's "created" in /v1/models

	ops       chan func()   // work for the engine loop; unbuffered, so a sent op always runs
	quit      chan struct{} // closed by Close
	stopped   chan struct{} // closed when the engine loop has exited (or Close ran without it)
	draining  atomic.Bool   // Serve is shutting down: new completions get 503
	busySince atomic.Int64  // Unix ns when the loop began its current step or op; 0: idle
	inflight  atomic.Int64  // completion handlers running

	longestPiece int // the most bytes of text one token stands for (see maxPromptBytes)

	mu        sync.Mutex
	started   bool
	closed    bool
	closeOnce sync.Once

	// Owned by the engine loop (read by others only after stopped is closed).
	chat    *chat.Formatter // the chat template; nil with chatErr when the model's cannot be used
	chatErr error

	sched   *engine.Scheduler
	added   int                  // requests added to sched since it was made
	past    engine.Stats         // totals of the schedulers retired before sched
	routes  map[int]*route       // request id in sched → where its tokens go
	choices int                  // the choices (sequences) of routes, against MaxQueue
	counter counters             // requests and tokens served
	pending map[*mailbox][]event // events of the current step, per mailbox
	view    *cacheView           // the cache's events and snapshots for the web view (cacheview.go)

	metrics *metrics // the Prometheus registry and histograms (metrics.go)
}

// counters are the engine loop's totals, for /metrics.
type counters struct {
	Requests        int64 // engine requests accepted (one per prompt)
	Finished        int64 // ... that ran to a stop
	Cancelled       int64 // ... cancelled because their client went away
	Failed          int64 // ... ended by an error (or by the server stopping)
	GeneratedTokens int64 // tokens delivered, all choices together
}

// New returns a server for e. The engine stays the caller's: Close does not close it. The
// engine loop starts with Run (or Serve).
func New(e *engine.Engine, opts Options) *Server {
	opts.Limits = opts.Limits.withDefaults()
	// step reduces every token's logits (log-probabilities) before the next Step.
	opts.Scheduler.ReuseLogits = true
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	name := opts.ModelName
	if name == "" {
		name = ModelName(e.Model().Source)
	}
	f, ferr := opts.Chat, error(nil)
	if f == nil {
		f, ferr = chat.NewFormatter(e.Model(), chat.TemplateOptions{})
	}
	view := newCacheView(e, &opts)
	s := &Server{
		chat:         f,
		chatErr:      ferr,
		eng:          e,
		opts:         opts,
		model:        name,
		created:      time.Now().Unix(),
		longestPiece: longestPiece(e.Model().Tokenizer),
		ops:          make(chan func()),
		quit:         make(chan struct{}),
		stopped:      make(chan struct{}),
		sched:        e.NewScheduler(opts.Scheduler),
		routes:       map[int]*route{},
		pending:      map[*mailbox][]event{},
		view:         view,
	}
	s.metrics = newMetrics(s)
	return s
}

// ModelName is the id a model is served under by default: the base name of its file, the
// name of the embedded model ("builtin:stories260K" is served as "stories260K"), or the
// reference of a synthetic one ("synth:default").
func ModelName(source string) string {
	switch {
	case source == "":
		return "builtin"
	case strings.HasPrefix(source, "builtin:"):
		return strings.TrimPrefix(source, "builtin:")
	case strings.HasPrefix(source, "synth:"):
		return source
	}
	return filepath.Base(source)
}

// Model returns the id the model is served under.
func (s *Server) Model() string { return s.model }

// Handler returns the HTTP handler of the API. Requests wait for the engine loop, so Run (or
// Serve) must be running for them to be answered.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/completions", s.handleCompletions)
	mux.HandleFunc("/v1/models", s.handleModels)
	mux.HandleFunc("/v1/models/{id...}", s.handleModel)
	mux.HandleFunc("/v1/chat/completions", s.handleChat)
	mux.HandleFunc("/health", s.handleHealth)
	mux.HandleFunc("/reset_prefix_cache", s.handleResetPrefixCache)
	mux.HandleFunc("/metrics", s.handleMetrics)
	for _, prefix := range []string{"", "/v1"} {
		mux.HandleFunc(prefix+"/tokenize", s.handleTokenize)
		mux.HandleFunc(prefix+"/detokenize", s.handleDetokenize)
	}
	s.mountCacheView(mux)
	mux.HandleFunc("/", s.handleNotFound)
	logged := s.accessLog(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.armWrite(w) // every response gets WriteTimeout; handlers that wait re-arm before writing
		logged.ServeHTTP(w, r)
	})
}

// Run is the engine loop: it owns the scheduler, takes requests from the handlers, steps
// while any request is waiting or running, and blocks when idle. It returns nil after
// Close, ctx.Err() when ctx is done, and an error if called twice or after Close. Requests
// still in the engine when it returns end with a 503 error.
func (s *Server) Run(ctx context.Context) error {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrClosed
	case s.started:
		s.mu.Unlock()
		return errRunning
	}
	s.started = true
	s.mu.Unlock()
	defer close(s.stopped)
	defer s.failAll(ErrClosed)  // the requests still in the engine when the loop stops
	stop := make(chan struct{}) // closed by Close or when ctx is done
	go func() {
		select {
		case <-ctx.Done():
		case <-s.quit:
		}
		close(stop)
	}()
	stopped := func() error { // Run's result once stop is closed
		select {
		case <-s.quit:
			return nil
		default:
			return ctx.Err()
		}
	}
	for {
		if s.sched.Done() {
			s.retire()
			select {
			case f := <-s.ops:
				s.runOp(f)
			case <-stop:
				return stopped()
			}
			continue
		}
		// Between steps, take what the handlers have sent without waiting (a bounded
		// number, so that a flood of submissions cannot starve the running requests).
	drain:
		for range 64 {
			select {
			case <-stop:
				return stopped()
			case f := <-s.ops:
				s.runOp(f)
			default:
				break drain
			}
		}
		if !s.sched.Done() {
			s.busy(true)
			s.step()
			s.busy(false)
		}
	}
}

// runOp runs an operation a handler sent, marking the loop busy meanwhile.
func (s *Server) runOp(f func()) {
	s.busy(true)
	f()
	s.busy(false)
}

// Close stops the engine loop (requests in flight end with a 503 error) and waits for it to
// exit. It does not close the engine. Close is idempotent.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		started := s.started
		s.mu.Unlock()
		close(s.quit)
		if !started {
			close(s.stopped)
		}
	})
	<-s.stopped
	return nil
}

// Serve answers HTTP requests on ln and runs the engine loop until ctx is done (or the
// listener fails), then shuts down gracefully: while running requests finish, for up to
// Options.ShutdownTimeout, it keeps accepting connections and answers /health and new
// completion requests with 503; then it stops accepting connections. The requests still running then are ended with a 503
// error (a stream gets an error event and [DONE]); connections whose clients do not take
// even that within shutdownGrace are closed. It closes ln. Do not call Run as well: Serve
// runs the loop itself. Its HTTP server applies ReadTimeout to request headers and
// IdleTimeout to keep-alive connections; the completion handler applies the other limits
// itself, so they hold under any http.Server.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: s.opts.ReadTimeout, IdleTimeout: s.opts.IdleTimeout}
	loop := make(chan error, 1)
	go func() { loop <- s.Run(context.Background()) }()
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()

	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	s.draining.Store(true)
	if st, serr := s.Stats(context.Background()); serr == nil && st.Running > 0 {
		s.logf("shutting down: letting %d running requests finish (at most %s)", st.Running, s.opts.ShutdownTimeout)
	}
	// Keep listening while the running requests finish: /health answers 503 ("shutting
	// down") and new generation requests get 503, instead of connections being refused.
	deadline := time.Now().Add(s.opts.ShutdownTimeout)
	if err == nil {
		for s.inflight.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	sctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil {
		st, _ := s.Stats(context.Background())
		s.logf("shutting down: %d engine requests of %d HTTP requests still running after %s: ending them with a 503 error",
			st.Running, s.inflight.Load(), s.opts.ShutdownTimeout)
		s.Close() // every request still in the engine gets ErrClosed, which its handler sends
		if left := s.waitHandlers(shutdownGrace); left > 0 {
			s.logf("shutting down: closing the connections of %d requests whose clients did not take their error within %s", left, shutdownGrace)
		}
		hs.Close()
	}
	s.Close()
	if lerr := <-loop; lerr != nil && !errors.Is(lerr, ErrClosed) {
		err = errors.Join(err, lerr)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// shutdownGrace is how long Serve waits, past its shutdown timeout, for the handlers to send
// their clients the error that ends their requests.
const shutdownGrace = 2 * time.Second

// waitHandlers waits up to d for the completion handlers to return and reports how many
// are still running.
func (s *Server) waitHandlers(d time.Duration) int64 {
	deadline := time.Now().Add(d)
	for s.inflight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	return s.inflight.Load()
}

// Stats is a snapshot of the server's counters, the scheduler's totals (over the server's
// whole life) and the cache pool's state.
type Stats struct {
	Running         int           `json:"running"`          // engine requests waiting or running now
	Requests        int64         `json:"requests"`         // engine requests accepted (one per prompt)
	Finished        int64         `json:"finished"`         // ... that ran to a stop
	Cancelled       int64         `json:"cancelled"`        // ... cancelled because their client went away
	Failed          int64         `json:"failed"`           // ... ended by an error
	GeneratedTokens int64         `json:"generated_tokens"` // tokens generated, all choices together
	Engine          engine.Stats  `json:"engine"`
	Cache           kvcache.Stats `json:"cache"`
}

// Stats returns the server's counters. It asks the engine loop, so it waits for the current
// step to end; once the loop has stopped it reads them directly.
func (s *Server) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	done := make(chan struct{})
	select {
	case s.ops <- func() { st = s.snapshot(); close(done) }:
		<-done
		return st, nil
	case <-s.stopped:
		return s.snapshot(), nil
	case <-ctx.Done():
		return st, ctx.Err()
	}
}

// snapshot gathers Stats; only the engine loop (or anyone after it stopped) may call it.
func (s *Server) snapshot() Stats {
	c := s.counter
	return Stats{
		Running: len(s.routes), Requests: c.Requests, Finished: c.Finished, Cancelled: c.Cancelled,
		Failed: c.Failed, GeneratedTokens: c.GeneratedTokens,
		Engine: combineStats(s.past, s.sched.Stats()),
		Cache:  s.eng.Pool().Stats(),
	}
}

// combineStats adds the totals of two schedulers that ran one after the other.
func combineStats(a, b engine.Stats) engine.Stats {
	out := engine.Stats{
		Steps:               a.Steps + b.Steps,
		RowsMax:             max(a.RowsMax, b.RowsMax),
		SequencesMax:        max(a.SequencesMax, b.SequencesMax),
		Preemptions:         a.Preemptions + b.Preemptions,
		CheckedTokens:       a.CheckedTokens + b.CheckedTokens,
		PrefillTokens:       a.PrefillTokens + b.PrefillTokens,
		DecodeTokens:        a.DecodeTokens + b.DecodeTokens,
		ReplayTokens:        a.ReplayTokens + b.ReplayTokens,
		PeakBlocksUsed:      max(a.PeakBlocksUsed, b.PeakBlocksUsed),
		PeakGroupBlocksUsed: maxEach(a.PeakGroupBlocksUsed, b.PeakGroupBlocksUsed),
	}
	if out.Steps > 0 {
		w := func(x, y float64) float64 {
			return (x*float64(a.Steps) + y*float64(b.Steps)) / float64(out.Steps)
		}
		out.RowsMean = w(a.RowsMean, b.RowsMean)
		out.SequencesMean = w(a.SequencesMean, b.SequencesMean)
	}
	return out
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logger != nil {
		s.opts.Logger.Info(fmt.Sprintf(format, args...))
		return
	}
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// maxEach is the larger of a[i] and b[i] at every i (the longer slice's length).
func maxEach(a, b []int) []int {
	if len(a) < len(b) {
		a, b = b, a
	}
	if a == nil {
		return nil
	}
	out := append([]int(nil), a...)
	for i, v := range b {
		out[i] = max(out[i], v)
	}
	return out
}
