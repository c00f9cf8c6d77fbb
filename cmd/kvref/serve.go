package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/kvref/kvref/cacheview"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/server"
)

// serveFlags are the flags of `kvref serve`.
type serveFlags struct {
	modelFlags
	engineFlags
	host, name         string
	port               int
	sequences          int
	batchTokens, chunk int
	check, quiet       bool
	tokenizeSpecial    bool
	viewHistory        int // --view-history
	viewRequests       int // --view-requests
	shutdownTimeout    time.Duration
	limits             server.Limits
	maxBody            sizeFlag
}

const serveUsage = `usage: kvref serve [-m MODEL] [--host H] [--port P] [flags]

Serves the model over an OpenAI-compatible HTTP API, backed by the continuous-batching
scheduler (every request shares one paged, prefix-caching KV cache):

  POST /v1/completions, POST /v1/chat/completions, GET /v1/models, POST /tokenize and
  /detokenize, POST /reset_prefix_cache,
  GET /health, GET /metrics, and the cache you can watch at GET / (with GET /v1/cache,
  GET /v1/cache/events, GET /v1/plan; --view-history and --view-requests say what it shows
  of what happened before the page opened). docs/serve.md lists each endpoint's fields, what
  it refuses, and the limits.

Every request, connection and the engine's queue is bounded (the --max-* and --*-timeout
flags below); a request over a limit gets an OpenAI-shaped error naming it (400, 408, 413 or
429).

Log-probabilities are the float64 log-softmax of the raw logits. The same request with the same
seed gives the same tokens whatever else is running. Ctrl-C (or SIGTERM) stops accepting
requests and lets running ones finish for --shutdown-timeout; a second Ctrl-C quits at once.`

func init() {
	register(command{"serve", "serve an OpenAI-compatible HTTP API (/v1/completions, /v1/chat/completions) over the continuous-batching scheduler", serveCmd})
}

func serveCmd(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, stop, args, stdout, stderr)
}

// serve runs `kvref serve` until ctx is done; then it calls restore (which gives a second
// Ctrl-C its default effect) and shuts the server down gracefully.
func serve(ctx context.Context, restore func(), args []string, stdout, stderr io.Writer) error {
	var f serveFlags
	fs := newFlags("serve", stderr, serveUsage)
	f.modelFlags.register(fs, "")
	f.engineFlags.register(fs, "enough for --sequences full-context sequences")
	topt := templateFlagSet(fs)
	fs.StringVar(&f.host, "host", "127.0.0.1", "address to listen on (0.0.0.0: every interface)")
	fs.IntVar(&f.port, "port", 8080, "port to listen on (0: any free port; the URL is printed on stderr)")
	fs.StringVar(&f.name, "served-model-name", "", "model id in the API (default: the model file's base name, or \"builtin\")")
	fs.IntVar(&f.sequences, "sequences", 4, "full-context sequences the default pool holds (with --cache-blocks 0)")
	fs.IntVar(&f.batchTokens, "max-batch-tokens", 2048, "tokens per step, decode and prefill together")
	fs.IntVar(&f.chunk, "chunk-size", 0, "most prompt tokens of one sequence per step (chunked prefill; 0: the batch budget)")
	fs.BoolVar(&f.check, "check", false, "recompute every step of every request with the cache-free reference and fail the request unless the logits are bit-identical; a token is sent only once its step has passed")
	l := &f.limits
	fs.IntVar(&l.MaxLogprobs, "max-logprobs", server.DefaultMaxLogprobs, "largest logprobs a request may ask for")
	fs.Var(&f.maxBody, "max-body", "largest request body (default 8MiB; "+plan.SizeHelp+"); larger: 413")
	fs.IntVar(&l.MaxPrompts, "max-prompts", server.DefaultMaxPrompts, "most prompts in one request")
	fs.IntVar(&l.MaxChoices, "max-choices", server.DefaultMaxChoices, "most choices (prompts × n) in one request")
	fs.IntVar(&l.MaxQueue, "max-queue", server.DefaultMaxQueue, "most choices in the engine at once, waiting or running, over all requests; more: 429")
	fs.IntVar(&l.MaxStops, "max-stops", server.DefaultMaxStops, "most stop strings in one request")
	fs.IntVar(&l.MaxStopBytes, "max-stop-bytes", server.DefaultMaxStopBytes, "longest stop string, in bytes")
	fs.IntVar(&l.MaxStopIDs, "max-stop-ids", server.DefaultMaxStopIDs, "most stop_token_ids in one request")
	fs.IntVar(&l.MaxSaltBytes, "max-salt-bytes", server.DefaultMaxSaltBytes, "longest cache_salt, in bytes")
	fs.IntVar(&l.MaxMessages, "max-messages", server.DefaultMaxMessages, "most messages in one chat request")
	fs.IntVar(&l.MaxContentParts, "max-content-parts", server.DefaultMaxParts, "most content parts in one chat message")
	fs.IntVar(&l.MaxKwargs, "max-template-kwargs", server.DefaultMaxKwargs, "most chat_template_kwargs keys in one chat request")
	fs.IntVar(&l.MaxKwargsBytes, "max-template-kwargs-bytes", server.DefaultMaxKwargsBytes, "most bytes of chat_template_kwargs in one chat request")
	fs.IntVar(&l.StreamBacklog, "stream-backlog", server.DefaultStreamBacklog, "tokens per choice that may wait for a streaming client that does not read before its request is cancelled")
	fs.DurationVar(&l.ReadTimeout, "read-timeout", server.DefaultReadTimeout, "most time to read a request's headers, and again its body (408 when the body stops arriving)")
	fs.DurationVar(&l.WriteTimeout, "write-timeout", server.DefaultWriteTimeout, "most time one write to a client may block before the client is cut off")
	fs.DurationVar(&l.IdleTimeout, "idle-timeout", server.DefaultIdleTimeout, "how long a keep-alive connection may wait for its next request")
	fs.DurationVar(&l.RequestTimeout, "request-timeout", server.DefaultRequestTimeout, "deadline of one completion request, from its arrival to its last token (503 past it)")
	fs.DurationVar(&l.StallTimeout, "stall-timeout", server.DefaultStallTimeout, "/health answers 503 when one engine step has run this long")
	fs.DurationVar(&f.shutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "on Ctrl-C or SIGTERM, how long running requests may finish")
	fs.BoolVar(&f.quiet, "quiet", false, "do not log each request on stderr")
	fs.BoolVar(&f.tokenizeSpecial, "tokenize-parse-special", true, "POST /tokenize parses special-token text (\"<s>\", \"<|im_start|>\") as those tokens unless a request sets parse_special; false: as plain text")
	fs.IntVar(&f.viewHistory, "view-history", cacheview.DefaultHistory, "recent cache events kept for pages that open later (about 190 B each; 0: none)")
	fs.IntVar(&f.viewRequests, "view-requests", cacheview.DefaultRequestHistory, "finished requests kept for the page's requests panel (0: none)")
	if err := parseFlagsOnly(fs, args, ""); err != nil {
		return err
	}
	switch {
	case f.port < 0 || f.port > 65535:
		return fmt.Errorf("--port must be between 0 and 65535, got %d", f.port)
	case f.sequences < 1:
		return fmt.Errorf("--sequences must be ≥ 1, got %d", f.sequences)
	case f.viewHistory < 0:
		return fmt.Errorf("--view-history must be ≥ 0, got %d", f.viewHistory)
	case f.viewRequests < 0:
		return fmt.Errorf("--view-requests must be ≥ 0, got %d", f.viewRequests)
	case f.shutdownTimeout <= 0:
		return fmt.Errorf("--shutdown-timeout must be positive, got %s", f.shutdownTimeout)
	case f.maxBody.set() && f.maxBody.bytes < 1:
		return fmt.Errorf("--max-body must be at least 1 byte, got %s", f.maxBody.text)
	}
	f.limits.MaxBodyBytes = f.maxBody.bytes // 0 when not given: the default
	if err := f.limits.Check(); err != nil {
		return err
	}

	eng, format, closeEngine, err := openChatEngine(&f.modelFlags, &f.engineFlags, topt, f.sequences, stderr)
	if err != nil {
		return err
	}
	defer closeEngine()
	m := eng.Model()

	logger := slog.New(newLineHandler(stderr, "kvref serve: ")) // timestamped lines, one write each
	logf := func(format string, args ...any) { logger.Info(fmt.Sprintf(format, args...)) }
	if format.Fallback {
		logf("%s has no chat template: /v1/chat/completions renders conversations with ChatML, as llama.cpp does (--chat-template FILE for another)", m.Source)
	}
	opts := server.Options{
		ModelName:       f.name,
		Scheduler:       engine.SchedulerConfig{MaxBatchTokens: f.batchTokens, ChunkSize: f.chunk},
		Check:           f.check,
		Limits:          f.limits,
		ShutdownTimeout: f.shutdownTimeout,
		Logger:          logger,
		LogRequests:     !f.quiet,
		TokenizeLiteral: !f.tokenizeSpecial,
		Chat:            format,
		ViewHistory:     orNone(f.viewHistory),
		ViewRequests:    orNone(f.viewRequests),
	}
	srv := server.New(eng, opts)

	ln, err := net.Listen("tcp", net.JoinHostPort(f.host, strconv.Itoa(f.port)))
	if err != nil {
		return err
	}
	pc := eng.Pool().Config()
	st := eng.Pool().Stats()
	logf("model %s (%s), context %d, vocabulary %d, %d threads", srv.Model(), m.Source, eng.Context(), m.Config.Vocab, eng.Runner().Threads())
	logf("KV cache %s/%s: %d blocks of %d tokens, %d B/token, %.1f MiB", pc.KType, pc.VType, pc.NumBlocks, pc.BlockSize, pc.BytesPerToken(), float64(st.BytesTotal)/(1<<20))
	logf("listening on http://%s/v1", ln.Addr())
	logf("watch the cache: http://%s/", ln.Addr())

	err = srv.ServeNotify(ctx, ln, func() {
		restore()
		logf("stopping: no new requests; running ones may finish for %s (Ctrl-C again to quit at once)", f.shutdownTimeout)
	})
	if err != nil {
		return err
	}
	logf("stopped")
	return nil
}

// orNone turns a flag's 0 ("none") into the -1 that server.Options takes for none (its 0 is
// the default).
func orNone(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
