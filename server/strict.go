package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Strict requests: a field kvref does not know is refused with a 400 that names it, as
// OpenAI's API does ("Unrecognized request argument supplied: temprature"), rather than
// silently ignored: a misspelt temperature, llama.cpp's repeat_penalty or n_predict would
// otherwise sample as if they were absent. Fields of other engines that kvref does not
// implement are named with their engine, so that the client learns what to send instead.

// foreignField says whose field an unknown request field is, and what kvref has instead.
type foreignField struct {
	engine string // "llama.cpp's (llama-server)", "vLLM's", "OpenAI's"
	hint   string // what to send to kvref instead, or ""
}

// foreignFields are other engines' request fields that kvref does not implement.
var foreignFields = map[string]foreignField{
	// llama-server's /completion and its OpenAI endpoints' extensions.
	"repeat_penalty":      {"llama.cpp's (llama-server)", "the sampler has no penalties"},
	"repeat_last_n":       {"llama.cpp's (llama-server)", "the sampler has no penalties"},
	"penalize_nl":         {"llama.cpp's (llama-server)", "the sampler has no penalties"},
	"dry_multiplier":      {"llama.cpp's (llama-server)", "the sampler has no penalties"},
	"dry_base":            {"llama.cpp's (llama-server)", "the sampler has no penalties"},
	"dry_allowed_length":  {"llama.cpp's (llama-server)", "the sampler has no penalties"},
	"n_predict":           {"llama.cpp's (llama-server)", "use max_tokens"},
	"n_probs":             {"llama.cpp's (llama-server)", "use logprobs (completions) or top_logprobs (chat)"},
	"n_keep":              {"llama.cpp's (llama-server)", "kvref never shifts the context"},
	"n_discard":           {"llama.cpp's (llama-server)", "kvref never shifts the context"},
	"n_indent":            {"llama.cpp's (llama-server)", ""},
	"id_slot":             {"llama.cpp's (llama-server)", "kvref has no slots: every request shares one paged cache"},
	"slot_id":             {"llama.cpp's (llama-server)", "kvref has no slots: every request shares one paged cache"},
	"mirostat":            {"llama.cpp's (llama-server)", "use temperature, top_k, top_p, min_p"},
	"mirostat_tau":        {"llama.cpp's (llama-server)", "use temperature, top_k, top_p, min_p"},
	"mirostat_eta":        {"llama.cpp's (llama-server)", "use temperature, top_k, top_p, min_p"},
	"tfs_z":               {"llama.cpp's (llama-server)", "use temperature, top_k, top_p, min_p"},
	"typical_p":           {"llama.cpp's (llama-server)", "use temperature, top_k, top_p, min_p"},
	"xtc_probability":     {"llama.cpp's (llama-server)", "use temperature, top_k, top_p, min_p"},
	"xtc_threshold":       {"llama.cpp's (llama-server)", "use temperature, top_k, top_p, min_p"},
	"dynatemp_range":      {"llama.cpp's (llama-server)", "use temperature"},
	"dynatemp_exponent":   {"llama.cpp's (llama-server)", "use temperature"},
	"samplers":            {"llama.cpp's (llama-server)", "kvref's sampler order is fixed: top_k, top_p, min_p, temperature"},
	"min_keep":            {"llama.cpp's (llama-server)", ""},
	"grammar":             {"llama.cpp's (llama-server)", "kvref does not constrain the output"},
	"json_schema":         {"llama.cpp's (llama-server)", "kvref does not constrain the output"},
	"post_sampling_probs": {"llama.cpp's (llama-server)", "kvref's logprobs are the raw model's"},
	"t_max_predict_ms":    {"llama.cpp's (llama-server)", "use max_tokens"},
	"return_progress":     {"llama.cpp's (llama-server)", ""},
	"timings_per_token":   {"llama.cpp's (llama-server)", "see GET /metrics"},
	"lora":                {"llama.cpp's (llama-server)", "kvref has no adapters"},
	// vLLM's extensions of the OpenAI API.
	"best_of_n":                     {"vLLM's", ""},
	"length_penalty":                {"vLLM's", "kvref does not search beams"},
	"early_stopping":                {"vLLM's", "kvref does not search beams"},
	"guided_json":                   {"vLLM's", "kvref does not constrain the output"},
	"guided_regex":                  {"vLLM's", "kvref does not constrain the output"},
	"guided_choice":                 {"vLLM's", "kvref does not constrain the output"},
	"guided_grammar":                {"vLLM's", "kvref does not constrain the output"},
	"guided_decoding_backend":       {"vLLM's", "kvref does not constrain the output"},
	"structured_outputs":            {"vLLM's", "kvref does not constrain the output"},
	"skip_special_tokens":           {"vLLM's", "the text always shows special tokens as the tokenizer spells them"},
	"spaces_between_special_tokens": {"vLLM's", ""},
	"truncate_prompt_tokens":        {"vLLM's", "kvref never truncates a prompt; shorten it"},
	"allowed_token_ids":             {"vLLM's", "the sampler does not restrict the vocabulary"},
	"bad_words":                     {"vLLM's", "the sampler does not restrict the vocabulary"},
	"detokenize":                    {"vLLM's", ""},
	"priority":                      {"vLLM's", "kvref serves first come, first served"},
	"request_id":                    {"vLLM's", ""},
	"logits_processors":             {"vLLM's", ""},
	"mm_processor_kwargs":           {"vLLM's", "kvref serves text-only models"},
	"chat_template":                 {"vLLM's", "kvref serve renders with the model's template (kvref serve --chat-template)"},
	"documents":                     {"vLLM's", ""},
	"add_special_tokens":            {"vLLM's", "the rendered conversation is tokenized as the template wrote it"},
	"kv_transfer_params":            {"vLLM's", ""},
	"vllm_xargs":                    {"vLLM's", ""},
	"prompt_embeds":                 {"vLLM's", "kvref takes text or token ids"},
	"continuous_usage_stats":        {"vLLM's", ""},
	// OpenAI's fields that kvref does not implement.
	"store":              {"OpenAI's", "kvref stores nothing"},
	"metadata":           {"OpenAI's", "kvref stores nothing"},
	"service_tier":       {"OpenAI's", ""},
	"reasoning_effort":   {"OpenAI's", ""},
	"verbosity":          {"OpenAI's", ""},
	"web_search_options": {"OpenAI's", ""},
	"prompt_cache_key":   {"OpenAI's", "use cache_salt (vLLM's) to separate cached prefixes"},
	"safety_identifier":  {"OpenAI's", ""},
}

// unrecognized is the 400 of a field kvref does not know.
func unrecognized(name string) *APIError {
	msg := "Unrecognized request argument supplied: " + name
	if f, ok := foreignFields[name]; ok {
		msg += fmt.Sprintf(" (%s field, which kvref does not implement", f.engine)
		if f.hint != "" {
			msg += ": " + f.hint
		}
		msg += ")"
	}
	return badRequest(name, "%s", msg).withCode("unrecognized_argument")
}

// decodeStrict decodes a request body into v, refusing a field v does not have (at any
// depth of v's structs), a body that is not one JSON object, and anything after it.
func decodeStrict(body []byte, v any) *APIError {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		switch name, ok := unknownField(err); {
		case ok:
			return unrecognized(name)
		case errors.Is(err, io.EOF):
			return badRequest("", "the request body is empty: send a JSON object")
		case errors.Is(err, io.ErrUnexpectedEOF):
			return badRequest("", "the request body is not valid JSON: it ends inside its object (%d bytes)", len(body))
		}
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("", "the request body has more after its JSON object (at byte %d): send one object", dec.InputOffset())
	}
	return nil
}

// unknownField extracts the field name from encoding/json's unknown-field error.
func unknownField(err error) (string, bool) {
	_, quoted, ok := strings.Cut(err.Error(), "unknown field ")
	if !ok {
		return "", false
	}
	name, uerr := strconv.Unquote(quoted)
	if uerr != nil {
		return quoted, true
	}
	return name, true
}

// Upper bounds of the sampling parameters: past them a value means nothing more (the
// distribution is uniform to float32 precision well before temperature 100) and is more
// likely a client's mistake than a wish.
const (
	MaxTemperature = 100.0
)

// finiteAtMost refuses v unless it is finite and at most limit.
func finiteAtMost(param string, v, limit float64) *APIError {
	if math.IsNaN(v) || math.IsInf(v, 0) || v > limit {
		return badRequest(param, "%s must be at most %g, got %g", param, limit, v)
	}
	return nil
}
