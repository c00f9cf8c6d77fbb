package server

import (
	"fmt"
	"net/http"
	"time"
)

// Limits bound what one client can make the server do: how much a request may ask for, how
// long a connection may hold the server, and how much the engine takes in at once. Every
// limit is checked before the work it bounds is done, and a request over one is refused
// with an OpenAI-shaped error whose message names the limit (and kvref serve's flag for it)
// and whose code says which it is: 400 for a request that asks too much, 413 for a body
// too large, 429 when the engine's queue is full, 408 for a body that does not arrive in
// time. A zero field takes its default.
type Limits struct {
	MaxBodyBytes int64 // largest request body, in bytes (--max-body; default 8 MiB)
	MaxPrompts   int   // prompts in one request (--max-prompts; default 64)
	MaxChoices   int   // prompts × n in one request (--max-choices; default 256)
	MaxLogprobs  int   // largest logprobs a request may ask for (--max-logprobs; default 20)
	MaxStops     int   // stop strings in one request (--max-stops; default 16)
	MaxStopBytes int   // bytes of one stop string (--max-stop-bytes; default 256)
	MaxStopIDs   int   // stop_token_ids in one request (--max-stop-ids; default 64)
	MaxSaltBytes int   // bytes of cache_salt (--max-salt-bytes; default 256)

	// Chat requests (chat_bounds.go), checked right after the body is decoded, before the
	// conversation is parsed or anything is rendered.
	MaxMessages     int // messages in one chat request (--max-messages; default 512)
	MaxContentParts int // content parts in one message (--max-content-parts; default 32)
	MaxKwargs       int // chat_template_kwargs keys (--max-template-kwargs; default 32)
	MaxKwargsBytes  int // bytes of chat_template_kwargs as sent (--max-template-kwargs-bytes; default 16 KiB)

	// MaxQueue is the most choices (sequences) in the engine at once, waiting or running,
	// over all requests (--max-queue; default 1024; at least MaxChoices). A request that
	// would go over it gets 429 with Retry-After, at once, instead of waiting behind
	// everything queued.
	MaxQueue int
	// StreamBacklog is how many generated tokens per choice may wait for a streaming client
	// that does not read (--stream-backlog; default 256). Past it the request is cancelled,
	// its blocks freed, and the stream ends with a client_too_slow error: a client that
	// stops reading cannot make the server hold its tokens without bound.
	StreamBacklog int

	// ReadTimeout bounds reading a request's headers, and again its body (--read-timeout;
	// default 30 s): a body that stops arriving gets 408 and its connection is closed.
	ReadTimeout time.Duration
	// WriteTimeout bounds each write to a client (--write-timeout; default 30 s): a client
	// that takes no bytes for that long is cut off and its request cancelled.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no next request for that long
	// (--idle-timeout; default 60 s).
	IdleTimeout time.Duration
	// RequestTimeout is the deadline of one completion request, from its arrival to its
	// last token (--request-timeout; default 30 min); past it the request is cancelled and
	// answered 503 (code request_timeout), or its stream ends with that error.
	RequestTimeout time.Duration
	// StallTimeout is how long the engine loop may spend in one step (or one piece of work
	// for a handler) before /health reports it stalled with 503 (--stall-timeout; default
	// 5 min).
	StallTimeout time.Duration
}

// The default limits.
const (
	DefaultMaxBodyBytes   = 8 << 20
	DefaultMaxPrompts     = 64
	DefaultMaxChoices     = 256
	DefaultMaxLogprobs    = 20
	DefaultMaxStops       = 16
	DefaultMaxStopBytes   = 256
	DefaultMaxStopIDs     = 64
	DefaultMaxSaltBytes   = 256
	DefaultMaxMessages    = 512
	DefaultMaxParts       = 32
	DefaultMaxKwargs      = 32
	DefaultMaxKwargsBytes = 16 << 10
	DefaultMaxQueue       = 1024
	DefaultStreamBacklog  = 256
	DefaultReadTimeout    = 30 * time.Second
	DefaultWriteTimeout   = 30 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
	DefaultRequestTimeout = 30 * time.Minute
	DefaultStallTimeout   = 5 * time.Minute
)

// withDefaults fills the zero (or negative) fields with their defaults.
func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	dur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	def(&l.MaxPrompts, DefaultMaxPrompts)
	def(&l.MaxChoices, DefaultMaxChoices)
	def(&l.MaxLogprobs, DefaultMaxLogprobs)
	def(&l.MaxStops, DefaultMaxStops)
	def(&l.MaxStopBytes, DefaultMaxStopBytes)
	def(&l.MaxStopIDs, DefaultMaxStopIDs)
	def(&l.MaxSaltBytes, DefaultMaxSaltBytes)
	def(&l.MaxMessages, DefaultMaxMessages)
	def(&l.MaxContentParts, DefaultMaxParts)
	def(&l.MaxKwargs, DefaultMaxKwargs)
	def(&l.MaxKwargsBytes, DefaultMaxKwargsBytes)
	def(&l.MaxQueue, DefaultMaxQueue)
	def(&l.StreamBacklog, DefaultStreamBacklog)
	dur(&l.ReadTimeout, DefaultReadTimeout)
	dur(&l.WriteTimeout, DefaultWriteTimeout)
	dur(&l.IdleTimeout, DefaultIdleTimeout)
	dur(&l.RequestTimeout, DefaultRequestTimeout)
	dur(&l.StallTimeout, DefaultStallTimeout)
	l.MaxQueue = max(l.MaxQueue, l.MaxChoices) // or the largest request could never run
	return l
}

// overLimit is the 400 of a request that asks for more than a limit allows: param is the
// request field, flag kvref serve's flag for the limit.
func overLimit(param, flag string, format string, args ...any) *APIError {
	msg := fmt.Sprintf(format, args...)
	return badRequest(param, "%s (the server's limit, kvref serve %s)", msg, flag).withCode("limit_exceeded")
}

// queueFull is the 429 of a request that would take the engine's queue past MaxQueue.
func queueFull(want, queued, limit int) *APIError {
	return newError(http.StatusTooManyRequests, serverError, "", "queue_full",
		"the server is busy: %d choices are in the engine and this request adds %d, over its limit of %d (kvref serve --max-queue); retry later", queued, want, limit)
}
