package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// lineHandler is the slog.Handler of kvref serve's log: one line per record,
//
//	2026-12-06T20:31:02.417Z kvref serve: POST /v1/completions 200: ..., 3.1 ms status=200 latency_ms=3.1 ...
//
// the time in UTC with milliseconds, the prefix, the message, then the attributes as
// key=value (values quoted when they hold spaces). One write per line: the server logs
// from many goroutines.
type lineHandler struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	attrs  []slog.Attr
	now    func() time.Time
}

func newLineHandler(w io.Writer, prefix string) *lineHandler {
	return &lineHandler{mu: &sync.Mutex{}, w: w, prefix: prefix, now: time.Now}
}

func (h *lineHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	t := r.Time
	if t.IsZero() {
		t = h.now()
	}
	var b strings.Builder
	b.WriteString(t.UTC().Format("2006-01-02T15:04:05.000Z"))
	b.WriteByte(' ')
	b.WriteString(h.prefix)
	if r.Level >= slog.LevelWarn {
		b.WriteString(r.Level.String() + ": ")
	}
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		v := a.Value.Resolve().String()
		if strings.ContainsAny(v, " \"=") || v == "" {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&b, " %s=%s", a.Key, v)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *lineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	g := *h
	g.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &g
}

func (h *lineHandler) WithGroup(string) slog.Handler { return h }
