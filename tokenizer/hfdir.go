package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// IsHFDir reports whether dir holds a Hugging Face tokenizer (tokenizer.json).
func IsHFDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "tokenizer.json"))
	return err == nil && st.Mode().IsRegular()
}

// FromHFDir builds the tokenizer of a Hugging Face model directory, or of a
// directory that holds only a tokenizer: tokenizer.json (required, see
// FromTokenizerJSON) with tokenizer_config.json when present. The
// eos_token_id of config.json and of generation_config.json (an id or a list
// of ids; both files optional) are end-of-generation ids too, as in
// transformers' generate and in vLLM; every id must be in the vocabulary.
// Errors name the file.
func FromHFDir(dir string) (Tokenizer, error) {
	path := filepath.Join(dir, "tokenizer.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w (a Hugging Face tokenizer is a tokenizer.json)", err)
	}
	config, err := readOptional(filepath.Join(dir, "tokenizer_config.json"))
	if err != nil {
		return nil, err
	}
	t, err := bpeFromTokenizerJSON(data, config)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, name := range []string{"config.json", "generation_config.json"} {
		ids, err := eosIDs(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if id < 0 || id >= t.VocabSize() || t.types[id] == TypeUndefined {
				return nil, fmt.Errorf("tokenizer: %s: eos_token_id %d is not a token of %s (%d ids)",
					filepath.Join(dir, name), id, path, t.VocabSize())
			}
			t.eog[id] = true
		}
	}
	return t, nil
}

// readOptional reads a file, returning nil when it does not exist.
func readOptional(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return data, nil
}

// eosIDs reads eos_token_id (absent, null, an id or a list of ids) from a
// JSON file that may not exist.
func eosIDs(path string) ([]int, error) {
	data, err := readOptional(path)
	if data == nil || err != nil {
		return nil, err
	}
	var doc struct {
		EOS json.RawMessage `json:"eos_token_id"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	raw := bytes.TrimSpace(doc.EOS)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one int
	if json.Unmarshal(raw, &one) == nil {
		return []int{one}, nil
	}
	var many []int
	if err := json.Unmarshal(raw, &many); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: eos_token_id is %s, want a token id or a list of them", path, shorten(string(raw), 40))
	}
	return many, nil
}
