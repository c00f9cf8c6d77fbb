package chattemplate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/ardanlabs/jinja"
)

// Object is a JSON object that keeps its keys in order. Templates see it as a dict, and
// tojson writes its keys in this order, as Python's json.dumps writes a dict built from the
// same JSON: a tool's schema must reach the prompt exactly as the client wrote it.
type Object []Field

// Field is one key of an Object and its value.
type Field struct {
	Key   string
	Value any
}

// Get returns the value of key and whether it is present.
func (o Object) Get(key string) (any, bool) {
	for _, f := range o {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// Set replaces the value of key, or appends the key.
func (o Object) Set(key string, v any) Object {
	for i := range o {
		if o[i].Key == key {
			o[i].Value = v
			return o
		}
	}
	return append(o, Field{key, v})
}

// MarshalJSON writes the object with its keys in order.
func (o Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.Key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// DecodeJSON decodes one JSON value for a template: objects become Objects (keys in order),
// arrays []any, numbers json.Number (so that integers stay integers), and strings, booleans
// and null their Go values. A repeated key keeps its first position and its last value, as
// Python's json.loads does.
func DecodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// maxDepth bounds the nesting of decoded JSON, so hostile input cannot exhaust the stack.
const maxDepth = 200

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d levels", maxDepth)
	}
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := t.(json.Delim)
	if !ok {
		return t, nil
	}
	switch d {
	case '{':
		o := Object{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			o = o.Set(k.(string), v)
		}
		_, err = dec.Token()
		return o, err
	case '[':
		a := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err = dec.Token()
		return a, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// toValue converts a Go value for the Jinja engine. Maps other than Object get their keys
// sorted, so that a render never depends on Go's map order.
func toValue(v any) (jinja.Value, error) {
	switch x := v.(type) {
	case nil:
		return jinja.None(), nil
	case jinja.Value:
		return x, nil
	case bool:
		return jinja.NewBool(x), nil
	case string:
		return jinja.NewString(x), nil
	case int:
		return jinja.NewInt(int64(x)), nil
	case int64:
		return jinja.NewInt(x), nil
	case float64:
		return jinja.NewFloat(x), nil
	case json.Number:
		return jinja.FromGoValue(x), nil
	case Object:
		d := jinja.NewDict()
		for _, f := range x {
			fv, err := toValue(f.Value)
			if err != nil {
				return jinja.Value{}, fmt.Errorf("%s: %w", f.Key, err)
			}
			d.AsDict().Set(f.Key, fv)
		}
		return d, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		o := make(Object, len(keys))
		for i, k := range keys {
			o[i] = Field{k, x[k]}
		}
		return toValue(o)
	case []any:
		items := make([]jinja.Value, len(x))
		for i, e := range x {
			ev, err := toValue(e)
			if err != nil {
				return jinja.Value{}, fmt.Errorf("[%d]: %w", i, err)
			}
			items[i] = ev
		}
		return jinja.NewList(items), nil
	case []Object:
		items := make([]any, len(x))
		for i, o := range x {
			items[i] = o
		}
		return toValue(items)
	case []string:
		items := make([]any, len(x))
		for i, s := range x {
			items[i] = s
		}
		return toValue(items)
	}
	return jinja.Value{}, fmt.Errorf("a Go %T cannot be a template value", v)
}

// valueString returns the text of a string value, or its printed form.
func valueString(v jinja.Value) string {
	if v.IsString() {
		return v.AsString()
	}
	return v.String()
}

// KindOf names the JSON kind of a decoded value ("a string", "an object", ...), for error
// messages about JSON input.
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case Object, map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
