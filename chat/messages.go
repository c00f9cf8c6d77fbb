package chat

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Roles are the message roles a conversation may have: what chat templates know.
var Roles = []string{"system", "user", "assistant"}

// Values returns the messages as a template sees them.
func Values(msgs []Message) []any {
	out := make([]any, len(msgs))
	for i, m := range msgs {
		out[i] = chattemplate.Object{{Key: "role", Value: m.Role}, {Key: "content", Value: m.Content}}
	}
	return out
}

// MessageError is a message a conversation cannot have. Field names it as a JSON path
// ("messages[2].content").
type MessageError struct {
	Field   string
	Message string
}

// Error returns the field and what is wrong with it.
func (e *MessageError) Error() string { return e.Field + ": " + e.Message }

// ParseMessages reads and checks OpenAI chat messages: a non-empty array of objects, each
// with a role of Roles and a string content (an array of text parts is joined with
// newlines, as vLLM does). Other keys (name, ...) pass through to the template. Tool calls,
// images and audio are refused: kvref runs text models and executes no tools. The messages
// come back as the template sees them, content as a string.
func ParseMessages(raw json.RawMessage) ([]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, &MessageError{"messages", "is required: an array of {\"role\", \"content\"} objects"}
	}
	v, err := chattemplate.DecodeJSON(raw)
	if err != nil {
		return nil, &MessageError{"messages", fmt.Sprintf("is not valid JSON: %v", err)}
	}
	list, ok := v.([]any)
	if !ok {
		return nil, &MessageError{"messages", fmt.Sprintf("must be an array of messages, got %s", chattemplate.KindOf(v))}
	}
	if len(list) == 0 {
		return nil, &MessageError{"messages", "is empty: a conversation needs at least one message"}
	}
	out := make([]any, len(list))
	for i, e := range list {
		m, err := parseMessage(e, fmt.Sprintf("messages[%d]", i))
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// parseMessage checks one message.
func parseMessage(v any, field string) (chattemplate.Object, error) {
	obj, ok := v.(chattemplate.Object)
	if !ok {
		return nil, &MessageError{field, fmt.Sprintf("must be an object with \"role\" and \"content\", got %s", chattemplate.KindOf(v))}
	}
	rv, ok := obj.Get("role")
	if !ok {
		return nil, &MessageError{field + ".role", "is missing: every message needs a role (" + strings.Join(Roles, ", ") + ")"}
	}
	role, ok := rv.(string)
	if !ok {
		return nil, &MessageError{field + ".role", fmt.Sprintf("must be a string, got %s", chattemplate.KindOf(rv))}
	}
	switch role {
	case "system", "user", "assistant":
	case "developer": // OpenAI's current name for system instructions; llama-server's and vLLM's templates see "system"
		obj = obj.Set("role", "system")
	case "tool", "function":
		return nil, &MessageError{field + ".role", fmt.Sprintf("%q is not supported: kvref serve executes no tools and has no tool results to show the model", role)}
	default:
		return nil, &MessageError{field + ".role", fmt.Sprintf("%q is not a role; use one of %s", role, strings.Join(Roles, ", "))}
	}
	for _, key := range []string{"tool_calls", "function_call", "audio"} {
		if tv, ok := obj.Get(key); ok && tv != nil {
			return nil, &MessageError{field + "." + key, "is not supported: kvref serve executes no tools and generates no audio"}
		}
	}
	cv, ok := obj.Get("content")
	if !ok || cv == nil {
		return nil, &MessageError{field + ".content", "is missing: every message needs its text as a string"}
	}
	text, err := content(cv, field+".content")
	if err != nil {
		return nil, err
	}
	out := make(chattemplate.Object, len(obj))
	copy(out, obj)
	return out.Set("content", text), nil
}

// content reads a message's content: a string, or an array of {"type": "text", "text"}
// parts, joined with newlines.
func content(v any, field string) (string, error) {
	switch c := v.(type) {
	case string:
		return c, nil
	case []any:
		texts := make([]string, len(c))
		for i, p := range c {
			pf := fmt.Sprintf("%s[%d]", field, i)
			part, ok := p.(chattemplate.Object)
			if !ok {
				return "", &MessageError{pf, fmt.Sprintf("must be a content part object, got %s", chattemplate.KindOf(p))}
			}
			tv, _ := part.Get("type")
			switch tv {
			case "text":
			case "image_url", "image", "input_image":
				return "", &MessageError{pf, "is an image: kvref serves text-only models; send text content"}
			case "input_audio", "audio", "file", "input_file", "video", "video_url":
				return "", &MessageError{pf, fmt.Sprintf("is a %v part: kvref serves text-only models; send text content", tv)}
			default:
				return "", &MessageError{pf + ".type", fmt.Sprintf("must be \"text\", got %v", describe(tv))}
			}
			tx, _ := part.Get("text")
			s, ok := tx.(string)
			if !ok {
				return "", &MessageError{pf + ".text", fmt.Sprintf("must be a string, got %s", chattemplate.KindOf(tx))}
			}
			texts[i] = s
		}
		return strings.Join(texts, "\n"), nil
	}
	return "", &MessageError{field, fmt.Sprintf("must be a string or an array of text parts, got %s", chattemplate.KindOf(v))}
}

// describe quotes a string value and names the kind of anything else.
func describe(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return chattemplate.KindOf(v)
}
