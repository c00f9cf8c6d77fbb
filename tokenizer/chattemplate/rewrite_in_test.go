package chattemplate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInOnNoneRaises: `'<think>' in message.content` raises, as Jinja2 does, when the
// content is null, and tests strings, lists and dicts as before; `not in` too; a for loop's
// in and an operand that is not whole (`a ~ b in c`) are left to the engine.
func TestInOnNoneRaises(t *testing.T) {
	tmpl, err := Parse("think", `{%- for message in messages -%}
{%- if '<think>' in message.content %}T{% elif 'x' not in message.content %}N{% else %}F{% endif -%}
{%- endfor %}{{ 'a' in ['a', 'b'] }}{{ 'k' in {'k': 1} }}{{ 'a' ~ 'b' in 'xaby' }}`)
	require.NoError(t, err)
	msg := func(content any) any {
		return Object{{Key: "role", Value: "assistant"}, {Key: "content", Value: content}}
	}
	out, err := tmpl.Render(Context{Messages: []any{msg("a<think>b"), msg("plain"), msg("x")}})
	require.NoError(t, err)
	require.Equal(t, "TNFTrueTrueTrue", out)

	_, err = tmpl.Render(Context{Messages: []any{msg("ok"), msg(nil)}})
	require.ErrorContains(t, err, "argument of type 'NoneType' is not iterable")

	require.Equal(t, `{{ __kvref_in('<think>', message.content) }}`, rewriteInTag(`{{ '<think>' in message.content }}`))
	require.Equal(t, `{% if not __kvref_in(x, y[0]) and z %}`, rewriteInTag(`{% if x not in y[0] and z %}`))
	require.Equal(t, `{{ a + b in c }}`, rewriteInTag(`{{ a + b in c }}`))
	got, err := rewriteIn(`{% for m in messages %}{% endfor %}`)
	require.NoError(t, err)
	require.Equal(t, `{% for m in messages %}{% endfor %}`, got)
}
