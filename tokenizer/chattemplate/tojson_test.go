package chattemplate

import (
	"testing"

	"github.com/ardanlabs/jinja"
	"github.com/stretchr/testify/require"
)

// The expected strings were printed by Python 3's json.dumps(value, ensure_ascii=False)
// and json.dumps(value, ensure_ascii=False, indent=2), which transformers' tojson calls.
func TestToJSONMatchesPython(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct{ in, flat, indented string }{
		{`{"b": 1, "a": [1, 2.5, {"x": null}], "é": "ü\n\t\"\\\u0001<&>"}`,
			"{\"b\": 1, \"a\": [1, 2.5, {\"x\": null}], \"é\": \"ü\\n\\t\\\"\\\\\\u0001<&>\"}",
			"{\n  \"b\": 1,\n  \"a\": [\n    1,\n    2.5,\n    {\n      \"x\": null\n    }\n  ],\n  \"é\": \"ü\\n\\t\\\"\\\\\\u0001<&>\"\n}"},
		{`[]`, "[]", "[]"},
		{`{}`, "{}", "{}"},
		{`[[]]`, "[[]]", "[\n  []\n]"},
		{`1.0`, "1.0", "1.0"},
		{`1e16`, "1e+16", "1e+16"},
		{`1e-5`, "1e-05", "1e-05"},
		{`123456789.0`, "123456789.0", "123456789.0"},
		{`0.1`, "0.1", "0.1"},
		{`-0.0`, "-0.0", "-0.0"},
		{`1.5e300`, "1.5e+300", "1.5e+300"},
		{`true`, "true", "true"},
		{`9007199254740993`, "9007199254740993", "9007199254740993"},
	} {
		v, err := DecodeJSON([]byte(tc.in))
		require.NoError(t, err, tc.in)
		jv, err := toValue(v)
		require.NoError(t, err)
		flat, err := tojson([]jinja.Value{jv}, nil)
		require.NoError(t, err)
		require.Equal(t, tc.flat, flat.AsString(), tc.in)
		ind, err := tojson([]jinja.Value{jv}, map[string]jinja.Value{"indent": jinja.NewInt(2)})
		require.NoError(t, err)
		require.Equal(t, tc.indented, ind.AsString(), tc.in)
	}
	// json.dumps({"b":1,"a":2}, sort_keys=True, separators=(',', ':'))
	v, _ := DecodeJSON([]byte(`{"b":1,"a":2}`))
	jv, _ := toValue(v)
	out, err := tojson([]jinja.Value{jv}, map[string]jinja.Value{
		"sort_keys":  jinja.NewBool(true),
		"separators": jinja.NewList([]jinja.Value{jinja.NewString(","), jinja.NewString(":")}),
	})
	require.NoError(t, err)
	require.Equal(t, `{"a":2,"b":1}`, out.AsString())
}

// Templates see tojson through the rewrite; the expected renders are Python Jinja2's
// (3.1.6, trim_blocks and lstrip_blocks, transformers' tojson).
func TestToJSONInTemplates(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct{ src, want string }{
		{`{{ x | tojson }}`, `{"b": [1, "<a>"], "a": null}`},
		{`{{ x | tojson(indent=1) }}`, "{\n \"b\": [\n  1,\n  \"<a>\"\n ],\n \"a\": null\n}"},
		{`{{ x.b | tojson }}|{{ x['b'][1] | tojson }}`, `[1, "<a>"]|"<a>"`},
		{`{{ x | dictsort | tojson }}`, `[["a", null], ["b", [1, "<a>"]]]`},
		{`{{ "s" ~ x.b | tojson ~ "e" }}`, `s[1, "<a>"]e`},
		{`{% set j = x.b|tojson %}{{ j }}`, `[1, "<a>"]`},
		{`{{ (x.b + [2]) | tojson }}`, `[1, "<a>", 2]`},
		{`{{ {'k': 'v|tojson'} | tojson }}`, `{"k": "v|tojson"}`},
		{`{{ 'a|b' | tojson }}`, `"a|b"`},
		{`{{ x | tojson(indent=None) }}`, `{"b": [1, "<a>"], "a": null}`},
		{`{% raw %}{{ x | tojson }}{% endraw %}`, `{{ x | tojson }}`},
		{`{# {{ x | tojson }} #}ok`, `ok`},
	} {
		tmpl, err := Parse("test", tc.src)
		require.NoError(t, err, tc.src)
		x, _ := DecodeJSON([]byte(`{"b": [1, "<a>"], "a": null}`))
		got, err := tmpl.Render(Context{Vars: map[string]any{"x": x}})
		require.NoError(t, err, tc.src)
		require.Equal(t, tc.want, got, tc.src)
	}
}

func TestRewriteToJSON(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct{ in, want string }{
		{`{{ a | tojson }}`, `{{ __kvref_tojson(a) }}`},
		{`{{- t | tojson(indent=4) }}`, `{{- __kvref_tojson(t, indent=4) }}`},
		{`{{ a.b[0].c | tojson }}`, `{{ __kvref_tojson(a.b[0].c) }}`},
		{`{{ f(x, y) | tojson }}`, `{{ __kvref_tojson(f(x, y)) }}`},
		{`{{ a | map(attribute='x') | tojson }}`, `{{ __kvref_tojson(a | map(attribute='x')) }}`},
		{`{{ "x" + a|tojson }}`, `{{ "x" + __kvref_tojson(a) }}`},
		{`{{ a || b }}`, `{{ a || b }}`},
		{`{{ a | tojsonx }}`, `{{ a | tojsonx }}`},
		{`text | tojson {{ a }}`, `text | tojson {{ a }}`},
		{`{{ a|tojson }}{{ b|tojson }}`, `{{ __kvref_tojson(a) }}{{ __kvref_tojson(b) }}`},
	} {
		got, err := rewriteToJSON(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{`{{ | tojson }}`, `{{ a | tojson(indent=4 }}`, `{{ a`, `{{ 'open }}`} {
		_, err := Parse("bad", bad)
		require.Error(t, err, bad)
	}
}
