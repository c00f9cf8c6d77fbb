package chat

import (
	"fmt"
	"os"

	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// ReadMessagesFile reads a conversation for Formatter.Prompt: a JSON file holding an
// array of {"role", "content", ...} messages, objects keeping their key order (a template
// that iterates over a message sees its keys as written).
func ReadMessagesFile(path string) ([]any, error) {
	v, err := readJSONFile(path)
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a JSON array of messages", path)
	}
	return list, nil
}

// ReadVarsFile reads extra template variables for Formatter.Vars (tools, enable_thinking,
// ...): a JSON file holding an object.
func ReadVarsFile(path string) (map[string]any, error) {
	v, err := readJSONFile(path)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(chattemplate.Object)
	if !ok {
		return nil, fmt.Errorf("%s: want a JSON object of variables", path)
	}
	vars := make(map[string]any, len(obj))
	for _, f := range obj {
		vars[f.Key] = f.Value
	}
	return vars, nil
}

// readJSONFile reads a JSON file for a template, objects keeping their key order.
func readJSONFile(path string) (any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := chattemplate.DecodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
