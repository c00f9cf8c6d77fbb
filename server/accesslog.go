package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// The access log: one line per response, whatever its status (4xx and 5xx included), with
// the method, path, status, latency and, for generation requests, the tokens. Lines go to
// Options.Logger (log/slog: each record has its time) as
//
//	POST /v1/completions 200: 1 prompt(s) × n=1, 6 prompt tokens (0 cached), 16 generated, 12.3 ms
//
// with the same facts as attributes (method, path, status, latency_ms, prompt_tokens,
// cached_tokens, generated_tokens, error), or, without a Logger, to Options.Logf.

// requestInfo is what a handler tells the access log about its request.
type requestInfo struct {
	outcome string // the generation's outcome ("200", "200 (client_too_slow)", "cancelled by the client")
	detail  string // the generation's prompts and tokens
	usage   *Usage
	errMsg  string // the error message of an error response
}

type infoKey struct{}

// infoOf returns the request's info, or nil outside the access log.
func infoOf(r *http.Request) *requestInfo {
	info, _ := r.Context().Value(infoKey{}).(*requestInfo)
	return info
}

// statusWriter remembers the status written; Unwrap keeps http.ResponseController (flush,
// deadlines, hijack) working through it.
type statusWriter struct {
	http.ResponseWriter
	status int
	info   *requestInfo
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the underlying writer (for http.ResponseController).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// noteError records an error response's message for the access log.
func noteError(w http.ResponseWriter, e *APIError) {
	if sw, ok := w.(*statusWriter); ok {
		sw.info.errMsg = e.Message
	}
}

// accessLog wraps h so that every response is logged, when Options.LogRequests is set.
func (s *Server) accessLog(h http.Handler) http.Handler {
	if !s.opts.LogRequests {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		sw := &statusWriter{ResponseWriter: w, info: info}
		h.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), infoKey{}, info)))
		s.logResponse(r, sw.status, time.Since(start), info)
	})
}

// logResponse writes one access-log line.
func (s *Server) logResponse(r *http.Request, status int, latency time.Duration, info *requestInfo) {
	ms := float64(latency.Microseconds()) / 1000
	outcome := info.outcome
	if outcome == "" {
		outcome = fmt.Sprint(status)
	}
	msg := fmt.Sprintf("%s %s %s", r.Method, r.URL.Path, outcome)
	switch {
	case info.detail != "":
		msg += fmt.Sprintf(": %s, %.1f ms", info.detail, ms)
	case info.errMsg != "":
		msg += fmt.Sprintf(": %s, %.1f ms", abbreviate120(info.errMsg), ms)
	default:
		msg += fmt.Sprintf(", %.1f ms", ms)
	}
	if s.opts.Logger == nil {
		s.logf("%s", msg)
		return
	}
	attrs := []slog.Attr{slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", status), slog.Float64("latency_ms", ms)}
	if u := info.usage; u != nil {
		attrs = append(attrs, slog.Int("prompt_tokens", u.PromptTokens), slog.Int("cached_tokens", u.PromptTokensDetails.CachedTokens), slog.Int("generated_tokens", u.CompletionTokens))
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelWarn
	}
	s.opts.Logger.LogAttrs(context.Background(), level, msg, attrs...)
}

// abbreviate120 shortens an error message for a log line.
func abbreviate120(s string) string {
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}
