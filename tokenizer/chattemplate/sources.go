package chattemplate

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/kvref/kvref/format/gguf"
)

// DefaultName is the name of a model's main template: GGUF's tokenizer.chat_template, a
// tokenizer_config.json string, or the list entry named "default".
const DefaultName = "default"

// GGUFKey is the GGUF metadata key of the default template; a named template NAME is
// under GGUFKey + "." + NAME (llama.cpp's convention, e.g. tokenizer.chat_template.tool_use).
const GGUFKey = "tokenizer.chat_template"

// Set holds a model's chat templates, Jinja source by name.
type Set map[string]string

// Names returns the names of the templates, the default first, then in sorted order.
func (s Set) Names() []string {
	names := make([]string, 0, len(s))
	for n := range s {
		if n != DefaultName {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	if _, ok := s[DefaultName]; ok {
		names = append([]string{DefaultName}, names...)
	}
	return names
}

// Template parses the template called name ("" is DefaultName). origin says where the set
// came from, for messages.
func (s Set) Template(origin, name string) (*Template, error) {
	if name == "" {
		name = DefaultName
	}
	src, ok := s[name]
	if !ok {
		if len(s) == 0 {
			return nil, fmt.Errorf("%s has no chat template", origin)
		}
		return nil, fmt.Errorf("%s has no chat template named %q; it has %s", origin, name, strings.Join(s.Names(), ", "))
	}
	label := origin
	if name != DefaultName {
		label += " (" + name + ")"
	}
	return Parse(label, src)
}

// FromGGUF returns the chat templates in a GGUF file's metadata: tokenizer.chat_template
// as DefaultName and tokenizer.chat_template.NAME as NAME. A file without them gives an
// empty set; a template key that is not a string is an error naming it.
func FromGGUF(f *gguf.File) (Set, error) {
	s := Set{}
	for _, kv := range f.Metadata {
		name := ""
		switch {
		case kv.Key == GGUFKey:
			name = DefaultName
		case strings.HasPrefix(kv.Key, GGUFKey+"."):
			name = strings.TrimPrefix(kv.Key, GGUFKey+".")
		default:
			continue
		}
		src, ok := kv.Value.Str()
		if !ok {
			return nil, fmt.Errorf("chattemplate: %s: metadata key %s is %s, want a string (a Jinja template)", f.Path, kv.Key, kv.Value.Type)
		}
		s[name] = src
	}
	return s, nil
}

// TokenizerConfig is what a chat template needs from a Hugging Face tokenizer_config.json.
type TokenizerConfig struct {
	Templates          Set
	BOSToken, EOSToken string // "" when absent or null
}

// ParseTokenizerConfig reads chat_template (a string, or a list of {"name", "template"}),
// bos_token and eos_token (strings, or AddedToken objects with a "content") from a
// tokenizer_config.json. path names the file in errors.
func ParseTokenizerConfig(path string, data []byte) (TokenizerConfig, error) {
	var raw struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
	}
	var tc TokenizerConfig
	if err := json.Unmarshal(data, &raw); err != nil {
		return tc, fmt.Errorf("chattemplate: %s: %w", path, err)
	}
	var err error
	if tc.Templates, err = templatesField(path, raw.ChatTemplate); err != nil {
		return tc, err
	}
	if tc.BOSToken, err = tokenField(path, "bos_token", raw.BOS); err != nil {
		return tc, err
	}
	if tc.EOSToken, err = tokenField(path, "eos_token", raw.EOS); err != nil {
		return tc, err
	}
	return tc, nil
}

// ReadTokenizerConfig reads and parses a tokenizer_config.json file.
func ReadTokenizerConfig(path string) (TokenizerConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return TokenizerConfig{}, err
	}
	return ParseTokenizerConfig(path, data)
}

// templatesField reads chat_template: absent or null, a string, or a list of named ones.
func templatesField(path string, raw json.RawMessage) (Set, error) {
	s := Set{}
	if len(raw) == 0 || string(raw) == "null" {
		return s, nil
	}
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		s[DefaultName] = one
		return s, nil
	}
	var list []struct {
		Name     *string `json:"name"`
		Template *string `json:"template"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("chattemplate: %s: chat_template must be a string or a list of {\"name\", \"template\"} objects", path)
	}
	for i, e := range list {
		if e.Name == nil || e.Template == nil {
			return nil, fmt.Errorf("chattemplate: %s: chat_template[%d] needs a string \"name\" and \"template\"", path, i)
		}
		s[*e.Name] = *e.Template
	}
	return s, nil
}

// tokenField reads a special token: a string, an AddedToken object, or null.
func tokenField(path, key string, raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Content == nil {
		return "", fmt.Errorf("chattemplate: %s: %s must be a string or an object with a \"content\" string", path, key)
	}
	return *obj.Content, nil
}

// ReadFile reads a template whose Jinja source is the whole file (--chat-template FILE).
func ReadFile(path string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, string(data))
}
