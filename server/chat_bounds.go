package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// Bounded chat requests. A conversation costs the server far more than its bytes: each
// message becomes a template value, each template variable a Jinja value, and rendering
// walks them all. So the number of messages, of content parts per message and of
// chat_template_kwargs keys (and their bytes) are bounded, each with a kvref serve flag,
// and checked right after the body is decoded, by counting the raw JSON arrays and objects
// (never more than one past the limit), before the messages are parsed or anything is
// rendered.

// reservedKwargs are the template variables kvref sets itself: chat_template_kwargs may not
// override them (a request could otherwise replace its own messages, skip the checks the
// messages pass, or change the special tokens).
var reservedKwargs = map[string]string{
	"messages":              "the conversation comes from messages",
	"bos_token":             "the model's special tokens are the model's",
	"eos_token":             "the model's special tokens are the model's",
	"add_generation_prompt": "use the request field add_generation_prompt",
	"tools":                 "kvref serve executes no tools",
	"documents":             "kvref serve sets documents itself (none)",
	"raise_exception":       "a function kvref gives the template",
	"strftime_now":          "a function kvref gives the template",
	"tojson":                "a filter kvref gives the template",
}

// boundChat refuses a chat request over the limits on messages, content parts and
// chat_template_kwargs.
func (s *Server) boundChat(req *chatRequest) *APIError {
	lim := s.opts.Limits
	raw := bytes.TrimSpace(req.Messages)
	if len(raw) == 0 || raw[0] != '[' {
		return nil // ParseMessages says what is wrong
	}
	msgs, more, err := splitArray(raw, lim.MaxMessages)
	switch {
	case err != nil:
		return nil
	case more:
		return overLimit("messages", "--max-messages", "messages has more than %d messages, at most %d are allowed", lim.MaxMessages, lim.MaxMessages)
	}
	for i, m := range msgs {
		var msg struct {
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m, &msg) != nil {
			continue
		}
		c := bytes.TrimSpace(msg.Content)
		if len(c) == 0 || c[0] != '[' {
			continue
		}
		if _, more, err := splitArray(c, lim.MaxContentParts); err == nil && more {
			field := fmt.Sprintf("messages[%d].content", i)
			return overLimit(field, "--max-content-parts", "%s has more than %d parts, at most %d are allowed", field, lim.MaxContentParts, lim.MaxContentParts)
		}
	}
	return nil
}

// templateKwargs decodes chat_template_kwargs into template variables, within MaxKwargs
// keys and MaxKwargsBytes bytes, refusing the variables kvref sets (reservedKwargs).
func (s *Server) templateKwargs(raw json.RawMessage) (map[string]any, *APIError) {
	const param = "chat_template_kwargs"
	lim := s.opts.Limits
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if len(raw) > lim.MaxKwargsBytes {
		return nil, overLimit(param, "--max-template-kwargs-bytes", "chat_template_kwargs is %d bytes, at most %d are allowed", len(raw), lim.MaxKwargsBytes)
	}
	if raw[0] != '{' {
		return nil, badRequest(param, "chat_template_kwargs must be an object of template variables, got %s", rawKind(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, badRequest(param, "chat_template_kwargs is not valid JSON: %v", err)
	}
	vars := map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, badRequest(param, "chat_template_kwargs is not valid JSON: %v", err)
		}
		key, _ := tok.(string)
		if why, ok := reservedKwargs[key]; ok {
			return nil, badRequest(param, "chat_template_kwargs may not set %q: kvref sets that template variable itself (%s); the variables it sets are %s", key, why, strings.Join(reservedNames(), ", ")).withCode("reserved_template_variable")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, badRequest(param, "chat_template_kwargs.%s is not valid JSON: %v", key, err)
		}
		if _, dup := vars[key]; !dup && len(vars) == lim.MaxKwargs {
			return nil, overLimit(param, "--max-template-kwargs", "chat_template_kwargs has more than %d keys, at most %d are allowed", lim.MaxKwargs, lim.MaxKwargs)
		}
		val, err := chattemplate.DecodeJSON(v)
		if err != nil {
			return nil, badRequest(param, "chat_template_kwargs.%s: %v", key, err)
		}
		vars[key] = val
	}
	return vars, nil
}

// reservedNames lists reservedKwargs' keys in order.
func reservedNames() []string {
	out := make([]string, 0, len(reservedKwargs))
	for k := range reservedKwargs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
