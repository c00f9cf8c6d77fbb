package hf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// decodeJSON unmarshals the JSON file data (read from path) into v. A syntax error names
// the key whose value it is in ("rope_theta", "text_config.sliding_window"), and NaN or
// Infinity, which Python's json writes and JSON does not have, gets a hint.
func decodeJSON(path string, data []byte, v any) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("hf: %s: %w", path, err)
	}
	where := ""
	if key := keyAt(data); key != "" {
		where = " in the value of " + key
	}
	hint := ""
	rest := data[min(max(se.Offset-1, 0), int64(len(data))):]
	for _, bad := range []string{"NaN", "Infinity", "-Infinity"} {
		if bytes.HasPrefix(rest, []byte(bad)) {
			hint = fmt.Sprintf(": %s is not JSON (Python's json.dump writes it for a float that is not a number); the key needs a finite number", bad)
		}
	}
	return fmt.Errorf("hf: %s: %w%s%s", path, err, where, hint)
}

// keyAt returns the path of the value at which decoding data stops with an error
// ("text_config.rope_theta", "layer_types[3]"), or "" when it stops outside any value.
func keyAt(data []byte) string {
	type frame struct {
		object  bool
		wantKey bool   // object: the next token is a key
		key     string // object: the key whose value is being read
		index   int    // array: the index of the element being read
	}
	var stack []frame
	// done advances the innermost container past the value just read.
	done := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			path := ""
			for _, f := range stack {
				switch {
				case f.object && !f.wantKey && path == "":
					path = f.key
				case f.object && !f.wantKey:
					path += "." + f.key
				case !f.object:
					path += "[" + strconv.Itoa(f.index) + "]"
				}
			}
			return path
		}
		d, isDelim := tok.(json.Delim)
		switch {
		case isDelim && (d == '}' || d == ']'):
			stack = stack[:len(stack)-1]
			done()
		case len(stack) > 0 && stack[len(stack)-1].wantKey:
			stack[len(stack)-1].key, stack[len(stack)-1].wantKey = tok.(string), false
		case isDelim: // '{' or '[': a container value opens
			stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
		default:
			done()
		}
	}
}
