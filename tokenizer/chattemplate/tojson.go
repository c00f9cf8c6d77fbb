package chattemplate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ardanlabs/jinja"
)

// tojson is Hugging Face's tojson, which transformers defines as
//
//	json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys)
//
// keys in the dict's order (or sorted with sort_keys), non-ASCII characters as they are,
// floats as Python's repr writes them, and with indent one item per line, separators
// (",", ": "). The Jinja engine's own tojson sorts the keys and escapes HTML characters when
// indent is given, which would change the tool schemas in a Llama 3 prompt, so every
// `| tojson` of a template is routed here (see rewriteToJSON).
func tojson(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if len(args) < 1 || len(args) > 2 {
		return jinja.Undefined(), fmt.Errorf("tojson takes one value (and an indent), got %d arguments", len(args))
	}
	e := jsonEncoder{item: ", ", key: ": "}
	indent, hasIndent := kwargs["indent"]
	if len(args) == 2 {
		indent, hasIndent = args[1], true
	}
	if hasIndent && !indent.IsNone() && !indent.IsUndefined() {
		switch {
		case indent.IsInt():
			e.indent = strings.Repeat(" ", int(max(0, min(indent.AsInt(), 64))))
		case indent.IsString():
			e.indent = indent.AsString()
		default:
			return jinja.Undefined(), fmt.Errorf("tojson: indent must be an integer or a string, got %s", indent.String())
		}
		e.pretty, e.item = true, ","
	}
	if sep, ok := kwargs["separators"]; ok && !sep.IsNone() && !sep.IsUndefined() {
		if !sep.IsList() || sep.AsList().Len() != 2 || !sep.AsList().Get(0).IsString() || !sep.AsList().Get(1).IsString() {
			return jinja.Undefined(), fmt.Errorf("tojson: separators must be two strings, got %s", sep.String())
		}
		e.item, e.key = sep.AsList().Get(0).AsString(), sep.AsList().Get(1).AsString()
	}
	if sk, ok := kwargs["sort_keys"]; ok {
		e.sortKeys = sk.IsTruthy()
	}
	var b strings.Builder
	if err := e.encode(&b, args[0], 0); err != nil {
		return jinja.Undefined(), err
	}
	return jinja.NewString(b.String()), nil
}

// jsonEncoder writes values as Python's json.dumps does.
type jsonEncoder struct {
	item, key string // separators
	pretty    bool   // indent given: one item per line
	indent    string
	sortKeys  bool
}

func (e *jsonEncoder) newline(b *strings.Builder, depth int) {
	if e.pretty {
		b.WriteByte('\n')
		for range depth {
			b.WriteString(e.indent)
		}
	}
}

// container writes a list or dict of n items at depth between open and close as
// json.dumps does: open and close alone when empty, otherwise each item, written by item,
// after the item separator (but the first) and a newline at depth+1, and a newline at
// depth before close.
func (e *jsonEncoder) container(b *strings.Builder, open, close byte, n, depth int, item func(i int) error) error {
	if n == 0 {
		b.WriteByte(open)
		b.WriteByte(close)
		return nil
	}
	b.WriteByte(open)
	for i := range n {
		if i > 0 {
			b.WriteString(e.item)
		}
		e.newline(b, depth+1)
		if err := item(i); err != nil {
			return err
		}
	}
	e.newline(b, depth)
	b.WriteByte(close)
	return nil
}

func (e *jsonEncoder) encode(b *strings.Builder, v jinja.Value, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("tojson: value nested deeper than %d levels", maxDepth)
	}
	switch {
	case v.IsNone(), v.IsUndefined():
		b.WriteString("null")
	case v.IsBool():
		b.WriteString(map[bool]string{true: "true", false: "false"}[v.AsBool()])
	case v.IsInt():
		b.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case v.IsFloat():
		b.WriteString(pythonFloat(v.AsFloat()))
	case v.IsString():
		writeJSONString(b, v.AsString())
	case v.IsList():
		items := v.AsList().Items
		return e.container(b, '[', ']', len(items), depth, func(i int) error {
			return e.encode(b, items[i], depth+1)
		})
	case v.IsDict():
		d := v.AsDict()
		keys := d.OrderedKeys()
		if e.sortKeys {
			slices.Sort(keys) // byte order of UTF-8 is code-point order, as Python sorts str
		}
		return e.container(b, '{', '}', len(keys), depth, func(i int) error {
			writeJSONString(b, keys[i])
			b.WriteString(e.key)
			val, _ := d.Get(keys[i])
			return e.encode(b, val, depth+1)
		})
	default:
		return fmt.Errorf("tojson: %s is not JSON serializable", v.String())
	}
	return nil
}

// writeJSONString quotes s as json.dumps with ensure_ascii=False does: only the quote, the
// backslash and control characters are escaped (\n, \r, \t, \b, \f by name, the others as
// \u00XX in lower-case hex).
func writeJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if c < 0x20 {
				fmt.Fprintf(b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}

// pythonFloat writes f as Python's repr (and so json.dumps) does: the shortest digits that
// read back as f, in positional notation with at least one decimal when the decimal
// exponent is in [-4, 16), else as d.ddde±XX; NaN and infinities as json.dumps writes them.
func pythonFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expPart, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expPart)
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.ContainsAny(s, ".") {
			s += ".0"
		}
		return s
	}
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	return fmt.Sprintf("%se%s%02d", mant, sign, exp)
}
