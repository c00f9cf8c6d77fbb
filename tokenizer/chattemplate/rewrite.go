package chattemplate

import (
	"fmt"
	"strings"
)

// tojsonFunc is the global that `| tojson` filters are rewritten to call.
const tojsonFunc = "__kvref_tojson"

// rewriteToJSON returns the template source with every filter `OPERAND | tojson` and
// `OPERAND | tojson(ARGS)` in its tags replaced by the call `__kvref_tojson(OPERAND)` /
// `__kvref_tojson(OPERAND, ARGS)`, so that kvref's own tojson (Python's json.dumps, see
// tojson) encodes the value: the engine's filter cannot be replaced, and its indent=N form
// sorts keys. The operand is what a Jinja filter applies to: the postfix expression before
// the bar (a name with its .attributes, [subscripts] and (calls), a literal, a parenthesised
// expression), together with the filters chained before it. Text outside tags, comments and
// {% raw %} blocks are left alone. An operand it cannot delimit is an error naming the line.
func rewriteToJSON(src string) (string, error) {
	if !strings.Contains(src, "tojson") {
		return src, nil
	}
	return rewriteTags(src, rewriteTag)
}

// rewriteTags returns src with every {{ }} and {% %} tag replaced by what rewrite makes of
// it. Text outside tags, {# #} comments and {% raw %} blocks are copied through unchanged.
// An error of rewrite is returned naming the line of the tag.
func rewriteTags(src string, rewrite func(tag string) (string, error)) (string, error) {
	var out strings.Builder
	i := 0
	for {
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
			// {% raw %}...{% endraw %} is text: copy it through the end tag.
			stop := indexEndRaw(src, end)
			if stop < 0 {
				return "", fmt.Errorf("line %d: {%% raw %%} without {%% endraw %%}", lineOf(src, open))
			}
			out.WriteString(src[open:stop])
			i = stop
			continue
		}
		if kind != '#' {
			if tag, err = rewrite(tag); err != nil {
				return "", fmt.Errorf("line %d: %w", lineOf(src, open), err)
			}
		}
		out.WriteString(tag)
		i = end
	}
}

// tagEnd returns the index just past the tag that starts at src[open] ("{{", "{%" or "{#"),
// skipping string literals inside {{ }} and {% %}.
func tagEnd(src string, open int) (int, error) {
	closer := map[byte]string{'{': "}}", '%': "%}", '#': "#}"}[src[open+1]]
	if src[open+1] == '#' {
		j := strings.Index(src[open+2:], closer)
		if j < 0 {
			return 0, fmt.Errorf("line %d: unterminated comment", lineOf(src, open))
		}
		return open + 2 + j + 2, nil
	}
	for j := open + 2; j < len(src); j++ {
		switch c := src[j]; {
		case c == '\'' || c == '"':
			k, err := skipString(src, j)
			if err != nil {
				return 0, fmt.Errorf("line %d: unterminated string in a tag", lineOf(src, j))
			}
			j = k - 1
		case strings.HasPrefix(src[j:], closer):
			return j + 2, nil
		}
	}
	return 0, fmt.Errorf("line %d: tag %s is not closed with %s", lineOf(src, open), src[open:open+2], closer)
}

// escaped reports whether src[i] is preceded by an odd number of backslashes.
func escaped(src string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && src[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// isRawTag reports whether a {% %} tag is {% raw %} (with any whitespace control).
func isRawTag(tag string) bool {
	inner := strings.Trim(tag[2:len(tag)-2], "-+ \t\r\n")
	return inner == "raw"
}

// indexEndRaw returns the index just past the {% endraw %} tag at or after from, or -1.
func indexEndRaw(src string, from int) int {
	for i := from; ; {
		j := strings.Index(src[i:], "{%")
		if j < 0 {
			return -1
		}
		j += i
		end, err := tagEnd(src, j)
		if err != nil {
			return -1
		}
		if strings.Trim(src[j+2:end-2], "-+ \t\r\n") == "endraw" {
			return end
		}
		i = end
	}
}

// rewriteTag rewrites the tojson filters of one tag.
func rewriteTag(tag string) (string, error) {
	for from := 0; ; {
		bar, name, err := nextToJSON(tag, from)
		if err != nil || bar < 0 {
			return tag, err
		}
		end := name + len("tojson")
		args := ""
		if k := skipSpace(tag, end); k < len(tag) && tag[k] == '(' {
			closeIdx, err := matchClose(tag, k)
			if err != nil {
				return "", err
			}
			args = strings.TrimSpace(tag[k+1 : closeIdx])
			end = closeIdx + 1
		}
		start, err := operandStart(tag, bar)
		if err != nil {
			return "", fmt.Errorf("cannot find what `| tojson` applies to in %q: %w", tag, err)
		}
		call := tojsonFunc + "(" + strings.TrimSpace(tag[start:bar])
		if args != "" {
			call += ", " + args
		}
		call += ")"
		tag = tag[:start] + call + tag[end:]
		from = start + len(call)
	}
}

// nextToJSON finds the next `| tojson` filter at or after from, outside string literals:
// the index of the bar and of the name, or -1.
func nextToJSON(tag string, from int) (int, int, error) {
	for j := from; j < len(tag); j++ {
		switch c := tag[j]; c {
		case '\'', '"':
			k, err := skipString(tag, j)
			if err != nil {
				return -1, -1, err
			}
			j = k - 1
		case '|':
			if j+1 < len(tag) && tag[j+1] == '|' {
				j++
				continue
			}
			k := skipSpace(tag, j+1)
			if strings.HasPrefix(tag[k:], "tojson") && (k+6 == len(tag) || !isIdentByte(tag[k+6])) {
				return j, k, nil
			}
		}
	}
	return -1, -1, nil
}

// operandStart returns where the operand of the filter whose bar is at tag[bar] begins.
func operandStart(tag string, bar int) (int, error) {
	i := skipSpaceBack(tag, bar)
	for {
		start, err := postfixStart(tag, i)
		if err != nil {
			return 0, err
		}
		j := skipSpaceBack(tag, start)
		if j > 0 && tag[j-1] == '|' && (j < 2 || tag[j-2] != '|') {
			i = skipSpaceBack(tag, j-1) // what we read was a filter of a chain: go on left
			continue
		}
		return start, nil
	}
}

// postfixStart returns where the postfix expression that ends just before tag[end] begins.
func postfixStart(tag string, end int) (int, error) {
	i := end
	for {
		if i == 0 {
			return 0, fmt.Errorf("no operand")
		}
		switch c := tag[i-1]; {
		case c == ')' || c == ']' || c == '}':
			open, err := matchOpen(tag, i-1)
			if err != nil {
				return 0, err
			}
			i = open
			if c != '}' && i > 0 && (isIdentByte(tag[i-1]) || strings.IndexByte(")]'\"", tag[i-1]) >= 0) {
				continue // a call or a subscript of what precedes
			}
			return i, nil
		case c == '\'' || c == '"':
			open, err := matchQuoteBack(tag, i-1)
			if err != nil {
				return 0, err
			}
			return open, nil
		case isIdentByte(c):
			for i > 0 && isIdentByte(tag[i-1]) {
				i--
			}
			if i > 0 && tag[i-1] == '.' {
				i--
				continue
			}
			return i, nil
		default:
			return 0, fmt.Errorf("unexpected %q before the filter", c)
		}
	}
}

// matchClose returns the index of the bracket closing the one at tag[open].
func matchClose(tag string, open int) (int, error) {
	depth := 0
	for j := open; j < len(tag); j++ {
		switch c := tag[j]; c {
		case '\'', '"':
			k, err := skipString(tag, j)
			if err != nil {
				return 0, err
			}
			j = k - 1
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return j, nil
			}
		}
	}
	return 0, fmt.Errorf("unbalanced brackets")
}

// matchOpen returns the index of the bracket opening the one at tag[close].
func matchOpen(tag string, close int) (int, error) {
	depth := 0
	for j := close; j >= 0; j-- {
		switch c := tag[j]; c {
		case '\'', '"':
			k, err := matchQuoteBack(tag, j)
			if err != nil {
				return 0, err
			}
			j = k
		case ')', ']', '}':
			depth++
		case '(', '[', '{':
			depth--
			if depth == 0 {
				return j, nil
			}
		}
	}
	return 0, fmt.Errorf("unbalanced brackets")
}

// skipString returns the index just past the string literal that starts at tag[j].
func skipString(tag string, j int) (int, error) {
	q := tag[j]
	for k := j + 1; k < len(tag); k++ {
		if tag[k] == q && !escaped(tag, k) {
			return k + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated string")
}

// matchQuoteBack returns the index of the quote opening the string literal that ends at
// tag[j].
func matchQuoteBack(tag string, j int) (int, error) {
	q := tag[j]
	for k := j - 1; k >= 0; k-- {
		if tag[k] == q && !escaped(tag, k) {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unterminated string")
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func skipSpace(s string, i int) int {
	for i < len(s) && strings.IndexByte(" \t\r\n", s[i]) >= 0 {
		i++
	}
	return i
}

func skipSpaceBack(s string, i int) int {
	for i > 0 && strings.IndexByte(" \t\r\n", s[i-1]) >= 0 {
		i--
	}
	return i
}

// lineOf returns the 1-based line of src[i].
func lineOf(src string, i int) int { return strings.Count(src[:i], "\n") + 1 }
