// Package cacheview is the KV cache you can watch: one web page, embedded in the binary,
// that draws the pool as a grid of blocks, every live sequence's block table, the bytes
// formula with the model's numbers, counters and an event log, updated live; a stepping
// mode driven from the browser (stepper.Session behind a mutex); and an interactive
// `kvref plan`.
//
// # Endpoints
//
//   - GET /: the page (static/index.html, app.js, style.css: plain JavaScript and CSS, no
//     framework, nothing fetched from the network).
//   - GET /v1/cache: a View, a JSON snapshot of the pool taken between engine steps.
//   - GET /v1/cache/events: Server-Sent Events, one "cache" event per Event (the pool's and
//     the scheduler's), and a "dropped" event when a slow viewer lost some (the engine
//     never waits for a viewer: each has a bounded buffer, see Hub). With ?since=N (or
//     Last-Event-ID) the hub's ring of recent events after N is replayed first; the
//     "hello" counts, by kind, the events before the stream (ServeEvents).
//   - In serve mode the View also lists the live and recent requests (Requests), each with
//     the blocks its sequences held, followed from the same events.
//   - GET /v1/plan: `kvref plan` as JSON (internal/plan), plus sequences-that-fit against
//     context for every cache type, for the page's "price it" panel.
//   - POST /v1/step (stepping mode only): one command of stepper.Commands (add, decode,
//     fork, free, temperature, seed, attention, reset, undo), answered with what it did.
//
// kvref serve mounts the first four on its API (server/cacheview.go); kvref step --web
// serves them all from a Stepper.
package cacheview
