package cacheview

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// keepAlive is how often an idle stream sends a comment, so that proxies and browsers keep
// the connection open.
const keepAlive = 15 * time.Second

// ServeEvents streams hub's events to one viewer with Server-Sent Events until the client
// goes away. It begins with "event: hello", a Hello: where the stream starts and the tally,
// by kind, of the events before it. With ?since=N (or the Last-Event-ID header of a
// reconnecting EventSource) the events after number N that the hub's ring still holds are
// replayed first (since=0: the whole ring), then the live ones follow, none missed and none
// twice; without, the stream starts with the next event. Each event is "event: cache" with
// the Event as JSON data and its number as the id; after a loss, "event: dropped" with
// {"dropped": N, "published": M, "lost": Tally} says how many were missed, of which kinds,
// and how many have been published, so the viewer can take a fresh snapshot and keep its
// counts.
func ServeEvents(w http.ResponseWriter, r *http.Request, hub *Hub) {
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "GET /v1/cache/events only")
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "this connection cannot stream events")
		return
	}
	// A stream lives as long as its viewer: lift the server's write deadline, if any.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	since := int64(-1)
	q := r.Header.Get("Last-Event-ID") // a reconnection goes on from its last event
	if q == "" {
		q = r.URL.Query().Get("since")
	}
	if q != "" {
		n, err := strconv.ParseInt(q, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("since must be an event number ≥ 0, got %q", q))
			return
		}
		since = n
	}
	sub, replay, hello := hub.SubscribeSince(since)
	defer hub.Unsubscribe(sub)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, "retry: 1000\n\n")
	writeSSE(w, "hello", 0, hello)
	for _, e := range replay {
		if err := writeSSE(w, "cache", e.N, e); err != nil {
			return
		}
	}
	flusher.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			flusher.Flush()
			continue
		case e := <-sub.Events():
			if err := writeSSE(w, "cache", e.N, e); err != nil {
				return
			}
		}
		// Send what else is waiting in one write, then say what was lost.
	more:
		for {
			select {
			case e := <-sub.Events():
				if err := writeSSE(w, "cache", e.N, e); err != nil {
					return
				}
			default:
				break more
			}
		}
		if n := sub.TakeDropped(); n > 0 {
			writeSSE(w, "dropped", 0, map[string]any{"dropped": n, "published": hub.Published(), "lost": sub.TakeLost()})
		}
		flusher.Flush()
	}
}

// writeSSE writes one event; id 0 writes none.
func writeSSE(w http.ResponseWriter, event string, id int64, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	if id > 0 {
		_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", id, event, b)
	} else {
		_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	}
	return err
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.Encode(v)
}

// writeError answers with an error in the API's shape, {"error": {"message", "type"}}.
func writeError(w http.ResponseWriter, status int, message string) {
	kind := "invalid_request_error"
	if status >= 500 {
		kind = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": message, "type": kind}})
}
