package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kvref/kvref/kvcache"
)

// handleModels serves GET /v1/models: the one model.
func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	writeJSON(w, http.StatusOK, ModelList{Object: "list", Data: []ModelInfo{s.modelInfo()}})
}

// handleModel serves GET /v1/models/{id}.
func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	if id := r.PathValue("id"); id != s.model {
		writeError(w, newError(404, invalidRequest, "model", "model_not_found", "the model %q does not exist: this server serves %q", id, s.model))
		return
	}
	writeJSON(w, http.StatusOK, s.modelInfo())
}

func (s *Server) modelInfo() ModelInfo {
	return ModelInfo{ID: s.model, Object: "model", Created: s.created, OwnedBy: "kvref", MaxModelLen: s.eng.Context()}
}

// handleHealth serves GET /health: 200 while the engine loop is alive, 503 once shutting
// down, before Run, after the loop stopped, or while it has been busy with one step (or one
// piece of a handler's work) for longer than StallTimeout.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	select {
	case <-s.stopped:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "stopped"})
		return
	default:
	}
	switch since := s.busySince.Load(); {
	case !started:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "starting", "reason": "the engine loop is not running yet"})
	case s.draining.Load():
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "shutting down"})
	case since != 0 && time.Since(time.Unix(0, since)) > s.opts.StallTimeout:
		busy := time.Since(time.Unix(0, since)).Round(time.Millisecond)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "stalled",
			"reason": fmt.Sprintf("the engine loop has been in one step for %s, more than %s (kvref serve --stall-timeout)", busy, s.opts.StallTimeout)})
	default:
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}
}

// handleMetrics serves GET /metrics: the server's, the scheduler's and the cache's counters
// in the Prometheus text format.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	st, err := s.Stats(r.Context())
	if err != nil {
		return // the client went away
	}
	s.armWrite(w)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, formatMetrics(st))
}

// formatMetrics renders st in the Prometheus text format, one HELP, TYPE and sample each.
func formatMetrics(st Stats) string {
	var b strings.Builder
	metric := func(name, kind, help string, v any) {
		fmt.Fprintf(&b, "# HELP kvref_%s %s\n# TYPE kvref_%s %s\nkvref_%s %v\n", name, help, name, kind, name, v)
	}
	e, c := st.Engine, st.Cache
	metric("requests_total", "counter", "Engine requests accepted (one per prompt).", st.Requests)
	metric("requests_finished_total", "counter", "Engine requests that ran to a stop.", st.Finished)
	metric("requests_cancelled_total", "counter", "Engine requests cancelled because their client went away.", st.Cancelled)
	metric("requests_failed_total", "counter", "Engine requests ended by an error.", st.Failed)
	metric("requests_running", "gauge", "Engine requests waiting or running now.", st.Running)
	metric("generated_tokens_total", "counter", "Tokens generated, all choices together.", st.GeneratedTokens)
	metric("scheduler_steps_total", "counter", "Scheduler steps (batched forward passes).", e.Steps)
	metric("scheduler_batch_tokens_mean", "gauge", "Mean tokens (rows) per step.", e.RowsMean)
	metric("scheduler_batch_tokens_max", "gauge", "Most tokens (rows) in one step.", e.RowsMax)
	metric("scheduler_batch_sequences_mean", "gauge", "Mean sequences per step.", e.SequencesMean)
	metric("scheduler_batch_sequences_max", "gauge", "Most sequences in one step.", e.SequencesMax)
	metric("scheduler_preemptions_total", "counter", "Sequences preempted (blocks freed, recomputed later).", e.Preemptions)
	metric("scheduler_prefill_tokens_total", "counter", "Prompt and recomputed tokens run.", e.PrefillTokens)
	metric("scheduler_decode_tokens_total", "counter", "Single-token decode rows run.", e.DecodeTokens)
	metric("cache_peak_blocks_used", "gauge", "Most cache blocks in use at the end of a step.", e.PeakBlocksUsed)
	metric("cache_block_size", "gauge", "Token slots per cache block.", c.BlockSize)
	metric("cache_blocks_total", "gauge", "Blocks in the cache pool.", c.BlocksTotal)
	metric("cache_blocks_used", "gauge", "Blocks referenced by at least one sequence.", c.BlocksUsed)
	metric("cache_blocks_cached", "gauge", "Unreferenced blocks kept for prefix hits (evictable).", c.BlocksCached)
	metric("cache_blocks_free", "gauge", "Free blocks.", c.BlocksFree)
	metric("cache_blocks_shared", "gauge", "Blocks referenced by two or more block-table entries.", c.BlocksShared)
	metric("cache_bytes_per_token", "gauge", "Cache bytes per token: 2 · layers · kv_heads · head_dim · bytes per element.", c.BytesPerToken)
	metric("cache_bytes_per_block", "gauge", "Cache bytes per block.", c.BytesPerBlock)
	metric("cache_bytes_in_use", "gauge", "Bytes of the blocks in use.", c.BytesInUse)
	metric("cache_bytes_total", "gauge", "Bytes the pool allocated.", c.BytesTotal)
	metric("cache_tokens_stored", "gauge", "Committed token slots in used blocks.", c.TokensStored)
	metric("cache_unused_slots", "gauge", "Slots of used blocks holding nothing (internal fragmentation).", c.UnusedSlots)
	metric("cache_prompt_tokens_total", "counter", "Prompt tokens of the sequences added to the pool.", c.PromptTokens)
	metric("cache_prefix_hit_tokens_total", "counter", "Prompt tokens whose K/V came from the prefix cache.", c.PrefixHitTokens)
	metric("cache_evictions_total", "counter", "Cached blocks evicted to make room.", c.Evictions)
	metric("cache_cow_copies_total", "counter", "Shared blocks copied before a write (copy-on-write).", c.CowCopies)
	metric("cache_sequences", "gauge", "Sequences in the pool.", c.Sequences)
	if len(c.Groups) > 0 {
		// A model with sliding layers beside full ones: one sample per cache group.
		group := func(name, kind, help string, v func(kvcache.GroupStats, int) any) {
			fmt.Fprintf(&b, "# HELP kvref_%s %s\n# TYPE kvref_%s %s\n", name, help, name, kind)
			for g, gs := range c.Groups {
				fmt.Fprintf(&b, "kvref_%s{group=\"%d\",window=\"%d\"} %v\n", name, g, gs.Window, v(gs, g))
			}
		}
		group("cache_group_layers", "gauge", "Layers of the cache group (blocks hold that many layers).", func(gs kvcache.GroupStats, _ int) any { return len(gs.Layers) })
		group("cache_group_blocks_used", "gauge", "Blocks the cache group's tables reference.", func(gs kvcache.GroupStats, _ int) any { return gs.BlocksUsed })
		group("cache_group_blocks_cached", "gauge", "Unreferenced blocks of the group kept for prefix hits.", func(gs kvcache.GroupStats, _ int) any { return gs.BlocksCached })
		group("cache_group_blocks_reclaimed_total", "counter", "Blocks the group's window released.", func(gs kvcache.GroupStats, _ int) any { return gs.BlocksReclaimed })
		group("cache_group_peak_blocks_used", "gauge", "Most blocks of the group in use at the end of a step.", func(_ kvcache.GroupStats, g int) any {
			if g < len(e.PeakGroupBlocksUsed) {
				return e.PeakGroupBlocksUsed[g]
			}
			return 0
		})
	}
	return b.String()
}

// handleNotFound answers every path the API does not have.
func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, newError(404, invalidRequest, "", "", "%s %s: no such endpoint; kvref serve has POST /v1/completions, POST /v1/chat/completions, GET /v1/models, GET /health and GET /metrics", r.Method, r.URL.Path))
}

// allow answers 405 (with an Allow header) unless the request uses one of the methods.
func allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	if slices.Contains(methods, r.Method) {
		return true
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	writeError(w, newError(405, invalidRequest, "", "method_not_allowed", "%s %s: method not allowed; use %s", r.Method, r.URL.Path, strings.Join(methods, " or ")))
	return false
}

// writeJSON sends v with status and returns the status.
func writeJSON(w http.ResponseWriter, status int, v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(ErrorResponse{Error: *newError(status, serverError, "", "", "encoding the response: %v", err)})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
	return status
}

// writeError sends an API error with its status and returns the status.
func writeError(w http.ResponseWriter, e *APIError) int {
	return writeJSON(w, e.Status, ErrorResponse{Error: *e})
}

// handleResetPrefixCache drops every cached block that no running request uses (vLLM's
// POST /reset_prefix_cache), so that the next requests miss: what a conformance suite's
// "flush" event needs.
func (s *Server) handleResetPrefixCache(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) {
		return
	}
	dropped := 0
	done := make(chan struct{})
	select {
	case s.ops <- func() { dropped = s.eng.Pool().Flush(); close(done) }:
		<-done
	case <-s.stopped:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "stopped"})
		return
	case <-r.Context().Done():
		return
	}
	s.armWrite(w)
	writeJSON(w, http.StatusOK, map[string]int{"dropped_blocks": dropped})
}
