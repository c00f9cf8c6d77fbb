package cacheview

import (
	"context"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"sync"
	"time"
)

//go:embed static
var static embed.FS

// Source is where a page's data comes from: a server's engine loop or a Stepper.
type Source struct {
	// View takes a snapshot, between engine steps.
	View func(ctx context.Context) (View, error)
	// Hub is the stream of events the view follows.
	Hub *Hub
}

// Mount registers the page and its endpoints on mux: GET / (the page), /assets/ (its script
// and style sheet), GET /v1/cache, GET /v1/cache/events, GET /v1/plan and
// GET /v1/plan/presets. The page's "/" matches only "/" itself, so a mux may keep a
// catch-all "/" of its own for unknown paths.
func Mount(mux *http.ServeMux, src Source, planner Planner) {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is part of the binary
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, files, "index.html")
	})
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(files)))
	snap := &coalescer{view: src.View}
	mux.HandleFunc("/v1/cache", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			writeError(w, http.StatusMethodNotAllowed, "GET /v1/cache only")
			return
		}
		body, err := snap.get(r.Context())
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, "no snapshot of the cache: "+err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(body)
	})
	mux.HandleFunc("/v1/cache/events", func(w http.ResponseWriter, r *http.Request) {
		ServeEvents(w, r, src.Hub)
	})
	mux.HandleFunc("GET /v1/plan", planner.ServePlan)
	mux.HandleFunc("GET /v1/plan/presets", planner.ServePresets)
}

// MinSnapshotInterval is the least time between the starts of two snapshots: however many
// viewers ask, and however fast, the engine spends at most one snapshot's time per interval
// on them.
const MinSnapshotInterval = 50 * time.Millisecond

// coalescer lets many viewers share snapshots: the engine takes at most one at a time,
// however many viewers ask, and starts at most one per MinSnapshotInterval. A request never
// gets a snapshot that began before it arrived: while one is being taken, later requests
// wait for the next one, which all of them share.
type coalescer struct {
	view    func(context.Context) (View, error)
	last    time.Time // when the last snapshot started
	mu      sync.Mutex
	running *flight // being taken
	queued  *flight // to be taken when running is done
}

type flight struct {
	done chan struct{}
	body []byte // the View as JSON, encoded once for everyone waiting
	err  error
}

func (c *coalescer) get(ctx context.Context) ([]byte, error) {
	c.mu.Lock()
	var f *flight
	switch {
	case c.running == nil:
		f = &flight{done: make(chan struct{})}
		c.running = f
		go c.take(f)
	case c.queued == nil:
		f = &flight{done: make(chan struct{})}
		c.queued = f
	default:
		f = c.queued
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.body, f.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// take takes f's snapshot (with no caller's deadline: others wait for it too), then starts
// the queued one.
func (c *coalescer) take(f *flight) {
	time.Sleep(time.Until(c.last.Add(MinSnapshotInterval)))
	c.last = time.Now() // only the one running take touches last
	var v View
	v, f.err = c.view(context.Background())
	if f.err == nil {
		f.body, f.err = json.Marshal(v)
	}
	c.mu.Lock()
	c.running = nil
	if next := c.queued; next != nil {
		c.queued = nil
		c.running = next
		go c.take(next)
	}
	c.mu.Unlock()
	close(f.done)
}
