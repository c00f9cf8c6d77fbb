package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
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

// handleNotFound answers every path the API does not have.
func (s *Server) handleNotFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, newError(404, invalidRequest, "", "", "%s %s: no such endpoint; kvref serve has POST /v1/completions, POST /v1/chat/completions, GET /v1/models, POST /tokenize, POST /detokenize, GET /health and GET /metrics", r.Method, r.URL.Path))
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
	noteError(w, e)
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
