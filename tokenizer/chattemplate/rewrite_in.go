package chattemplate

import (
	"fmt"
	"strings"

	"github.com/ardanlabs/jinja"
)

// The `in` operator on none. In Python's Jinja2 (and Hugging Face's JavaScript Jinja)
// `'<think>' in message.content` raises when the content is null: "argument of type
// 'NoneType' is not iterable". The engine kvref uses answers false and renders on, so a
// conversation the reference implementations refuse would be rendered. Templates test
// `in` on message content (reasoning models strip <think> blocks so), so rewriteIn turns
// `A in B` and `A not in B` in tags into calls of kvref's own test (inFunc), which raises as
// Jinja2 does. It rewrites only where both operands are whole: a postfix expression or
// literal standing alone between a tag's start, `(`, `,`, `[`, `=`, or the words if, elif,
// and, or, not, and a tag's end, `)`, `,`, `]`, or the words and, or, if, else. Anything
// else (`a + b in c`) is left to the engine. The `in` of a for loop is never touched.

// inFunc is the global that `in` tests are rewritten to call.
const inFunc = "__kvref_in"

// rewriteIn rewrites the `in` tests of a template's tags.
func rewriteIn(src string) (string, error) {
	if !strings.Contains(src, " in ") {
		return src, nil
	}
	var out strings.Builder
	for i := 0; ; {
		open := strings.Index(src[i:], "{")
		if open < 0 || i+open+1 >= len(src) {
			out.WriteString(src[i:])
			return out.String(), nil
		}
		open += i
		kind := src[open+1]
		if kind != '{' && kind != '%' && kind != '#' {
			out.WriteString(src[i : open+1])
			i = open + 1
			continue
		}
		out.WriteString(src[i:open])
		end, err := tagEnd(src, open)
		if err != nil {
			return "", err
		}
		tag := src[open:end]
		if kind == '%' && isRawTag(tag) {
			stop := indexEndRaw(src, end)
			if stop < 0 {
				return "", fmt.Errorf("line %d: {%% raw %%} without {%% endraw %%}", lineOf(src, open))
			}
			out.WriteString(src[open:stop])
			i = stop
			continue
		}
		if kind != '#' && !isForTag(tag) {
			tag = rewriteInTag(tag)
		}
		out.WriteString(tag)
		i = end
	}
}

// isForTag reports whether a {% %} tag is a for loop.
func isForTag(tag string) bool {
	inner := strings.TrimLeft(tag[2:], "-+ \t\r\n")
	return strings.HasPrefix(inner, "for ") || strings.HasPrefix(inner, "for\t")
}

// rewriteInTag rewrites every `in` test of one tag whose operands are whole.
func rewriteInTag(tag string) string {
	for from := 2; ; {
		at := nextIn(tag, from)
		if at < 0 {
			return tag
		}
		from = at + 2
		negated := false
		leftEnd := skipSpaceBack(tag, at)
		if w := wordBefore(tag, leftEnd); w == "not" {
			negated, leftEnd = true, skipSpaceBack(tag, leftEnd-3)
		}
		start, err := postfixStart(tag, leftEnd)
		if err != nil || start == leftEnd || !boundaryBefore(tag, start) {
			continue
		}
		rstart := skipSpace(tag, at+2)
		rend, ok := postfixEnd(tag, rstart)
		if !ok || !boundaryAfter(tag, rend) {
			continue
		}
		call := inFunc + "(" + strings.TrimSpace(tag[start:leftEnd]) + ", " + strings.TrimSpace(tag[rstart:rend]) + ")"
		if negated {
			call = "not " + call
		}
		tag = tag[:start] + call + tag[rend:]
		from = start + len(call)
	}
}

// nextIn returns the index of the next word `in` at or after from, outside string
// literals, or -1.
func nextIn(tag string, from int) int {
	for j := from; j+2 <= len(tag); j++ {
		switch c := tag[j]; {
		case c == '\'' || c == '"':
			k, err := skipString(tag, j)
			if err != nil {
				return -1
			}
			j = k - 1
		case strings.HasPrefix(tag[j:], "in") && (j == 0 || !isIdentByte(tag[j-1])) && (j+2 == len(tag) || !isIdentByte(tag[j+2])):
			return j
		}
	}
	return -1
}

// wordBefore returns the identifier that ends at tag[end-1], or "".
func wordBefore(tag string, end int) string {
	i := end
	for i > 0 && isIdentByte(tag[i-1]) {
		i--
	}
	return tag[i:end]
}

// boundaryBefore reports whether what precedes tag[start] ends an operand's left side: the
// tag's opening, an opening bracket, a comma, =, or a word that ends an expression's start.
func boundaryBefore(tag string, start int) bool {
	i := skipSpaceBack(tag, start)
	if i <= 2 {
		return true
	}
	if strings.HasSuffix(tag[:i], "{{-") || strings.HasSuffix(tag[:i], "{%-") || strings.HasSuffix(tag[:i], "{{+") || strings.HasSuffix(tag[:i], "{%+") {
		return true
	}
	switch tag[i-1] {
	case '(', ',', '[':
		return true
	case '=':
		return i < 2 || !strings.ContainsRune("=!<>", rune(tag[i-2]))
	}
	switch wordBefore(tag, i) {
	case "if", "elif", "and", "or", "not", "return":
		return true
	}
	return false
}

// boundaryAfter reports whether what follows tag[end] ends an operand's right side.
func boundaryAfter(tag string, end int) bool {
	i := skipSpace(tag, end)
	rest := tag[i:]
	for _, s := range []string{"}}", "%}", "-}}", "-%}", "+%}", ")", ",", "]"} {
		if strings.HasPrefix(rest, s) {
			return true
		}
	}
	for _, w := range []string{"and", "or", "if", "else"} {
		if strings.HasPrefix(rest, w) && (len(rest) == len(w) || !isIdentByte(rest[len(w)])) {
			return true
		}
	}
	return false
}

// postfixEnd returns where the postfix expression (a literal or name, then .attributes,
// [subscripts] and (calls)) that starts at tag[start] ends.
func postfixEnd(tag string, start int) (int, bool) {
	i := start
	switch {
	case i >= len(tag):
		return 0, false
	case tag[i] == '\'' || tag[i] == '"':
		k, err := skipString(tag, i)
		if err != nil {
			return 0, false
		}
		i = k
	case tag[i] == '(' || tag[i] == '[':
		k, err := matchClose(tag, i)
		if err != nil {
			return 0, false
		}
		i = k + 1
	case isIdentByte(tag[i]):
		for i < len(tag) && isIdentByte(tag[i]) {
			i++
		}
	default:
		return 0, false
	}
	for i < len(tag) {
		switch {
		case tag[i] == '.' && i+1 < len(tag) && isIdentByte(tag[i+1]):
			i++
			for i < len(tag) && isIdentByte(tag[i]) {
				i++
			}
		case tag[i] == '[' || tag[i] == '(':
			k, err := matchClose(tag, i)
			if err != nil {
				return 0, false
			}
			i = k + 1
		default:
			return i, true
		}
	}
	return i, true
}

// inTest is `item in container` as Jinja2 evaluates it: a substring of a string, an
// element of a list, a key of a dict, false for an undefined container (Jinja2's Undefined
// iterates as empty), and a TypeError for none and numbers, which Python cannot iterate.
func inTest(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) != 2 {
		return jinja.Undefined(), fmt.Errorf("in: want 2 operands, got %d", len(args))
	}
	item, c := args[0], args[1]
	switch {
	case c.IsUndefined():
		return jinja.NewBool(false), nil
	case c.IsNone():
		return jinja.Undefined(), fmt.Errorf("TypeError: argument of type 'NoneType' is not iterable (the template tests `in` on a value that is none, e.g. a message whose content is null)")
	case c.IsBool(), c.IsNumber():
		return jinja.Undefined(), fmt.Errorf("TypeError: argument of type '%s' is not iterable", pyType(c))
	case c.IsString():
		if !item.IsString() {
			return jinja.Undefined(), fmt.Errorf("TypeError: 'in <string>' requires string as left operand, not %s", pyType(item))
		}
		return jinja.NewBool(strings.Contains(c.AsString(), item.AsString())), nil
	case c.IsList():
		for _, v := range c.AsList().Items {
			if v.Equals(item) {
				return jinja.NewBool(true), nil
			}
		}
		return jinja.NewBool(false), nil
	case c.IsDict():
		return jinja.NewBool(item.IsString() && c.AsDict().Has(item.AsString())), nil
	}
	return jinja.NewBool(false), nil
}

// pyType names a value's Python type, for TypeError messages.
func pyType(v jinja.Value) string {
	switch {
	case v.IsNone():
		return "NoneType"
	case v.IsBool():
		return "bool"
	case v.IsInt():
		return "int"
	case v.IsFloat():
		return "float"
	case v.IsString():
		return "str"
	case v.IsList():
		return "list"
	case v.IsDict():
		return "dict"
	}
	return "Undefined"
}
