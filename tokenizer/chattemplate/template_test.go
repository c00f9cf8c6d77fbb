package chattemplate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/gguf"
)

func render(t *testing.T, src string, c Context) (string, error) {
	t.Helper()
	tmpl, err := Parse("test", src)
	require.NoError(t, err, src)
	return tmpl.Render(c)
}

func TestRaiseException(t *testing.T) {
	t.Parallel()

	_, err := render(t, `{% for m in messages %}{% if m.role == 'user' %}{{ raise_exception('no users here: ' ~ m.content) }}{% endif %}{% endfor %}`,
		Context{Messages: []any{Object{{"role", "user"}, {"content", "hi"}}}})
	var raised *RaiseError
	require.True(t, errors.As(err, &raised), "%v", err)
	require.Equal(t, "no users here: hi", raised.Message)
	require.Contains(t, err.Error(), "chat template test raised an error: no users here: hi")
}

// The expected strings are Python's datetime.strftime on Linux for the same instants.
func TestStrftime(t *testing.T) {
	t.Parallel()

	d := time.Date(2024, 7, 26, 0, 0, 0, 0, time.UTC)
	for f, want := range map[string]string{
		"%d %b %Y":      "26 Jul 2024",
		"%Y-%m-%d":      "2024-07-26",
		"%A %B %-d, %Y": "Friday July 26, 2024",
		"%a %e %j %U %W %w %y %I %p %H:%M:%S %x %X %c %%": "Fri 26 208 29 30 5 24 12 AM 00:00:00 07/26/24 00:00:00 Fri Jul 26 00:00:00 2024 %",
	} {
		got, err := strftime(f, d)
		require.NoError(t, err)
		require.Equal(t, want, got, f)
	}
	got, err := strftime("%a %e %j %U %W %w %y %I %p %H:%M:%S %-I %-H %-m", time.Date(2023, 1, 1, 13, 5, 9, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, "Sun  1 001 01 00 0 23 01 PM 13:05:09 1 13 1", got)
	_, err = strftime("%Q", d)
	require.ErrorContains(t, err, "%Q")

	out, err := render(t, `{{ strftime_now("%d %B %Y") }}`, Context{Now: d})
	require.NoError(t, err)
	require.Equal(t, "26 July 2024", out)
}

func TestContextVariables(t *testing.T) {
	t.Parallel()

	src := `{{ bos_token is defined }} {{ eos_token }} {{ tools is none }} {{ documents is none }} {{ add_generation_prompt }} {{ messages | length }} {{ enable_thinking }}`
	out, err := render(t, src, Context{EOSToken: "</s>", AddGenerationPrompt: true, Messages: []any{Object{{"role", "user"}}}, Vars: map[string]any{"enable_thinking": false}})
	require.NoError(t, err)
	require.Equal(t, "False </s> True True True 1 False", out)
	// Vars override the defaults: tools passed through as given, keys in order.
	tools, err := DecodeJSON([]byte(`[{"type": "function", "function": {"name": "f"}}]`))
	require.NoError(t, err)
	out, err = render(t, `{{ tools[0].function.name }} {{ tools | tojson }}`, Context{Vars: map[string]any{"tools": tools}})
	require.NoError(t, err)
	require.Equal(t, `f [{"type": "function", "function": {"name": "f"}}]`, out)
}

// Jinja2 (and so transformers) drops one trailing newline of the source, and trim_blocks
// and lstrip_blocks are on: the expected strings are Python Jinja2 3.1.6's.
func TestWhitespaceAsTransformers(t *testing.T) {
	t.Parallel()

	for src, want := range map[string]string{
		"a\n":                               "a",
		"a\n\n":                             "a\n",
		"{% if true %}\n  x\n{% endif %}\n": "  x\n",
		"  {% if true %}y{% endif %}\nz":    "yz",
		"{{ 'v' }}\n":                       "v",
		"{{ 'v' }}\nw":                      "v\nw",
	} {
		out, err := render(t, src, Context{})
		require.NoError(t, err, "%q", src)
		require.Equal(t, want, out, "%q", src)
	}
}

// A construct the engine lacks is an error that names it, never a panic or a silent
// wrong render.
func TestUnsupportedConstructsAreNamed(t *testing.T) {
	t.Parallel()

	_, err := Parse("t", `{% include 'other.jinja' %}`)
	require.ErrorContains(t, err, `unknown statement "include"`)
	for src, want := range map[string]string{
		`{{ 'a\nb'.splitlines() }}`:                        "splitlines()",
		`{{ x | nosuchfilter }}`:                           `unknown filter "nosuchfilter"`,
		`{{ [1, 2, 3] | selectattr('x') | list }}`:         "the Jinja engine failed while rendering",
		`{{ strftime_now('%Q') }}`:                         "%Q",
		`{% for m in messages %}{{ m.bad() }}{% endfor %}`: "m.bad()",
	} {
		_, err := render(t, src, Context{Messages: []any{Object{{"role", "user"}}}})
		require.ErrorContains(t, err, want, src)
		require.ErrorContains(t, err, "chat template t", src)
	}
}

func TestSetsFromGGUFAndConfig(t *testing.T) {
	t.Parallel()

	w := gguf.NewWriter()
	w.AddString("general.architecture", "llama")
	w.AddString(GGUFKey, "{{ 'default' }}")
	w.AddString(GGUFKey+".tool_use", "{{ 'tools' }}")
	path := filepath.Join(t.TempDir(), "m.gguf")
	require.NoError(t, w.WriteFile(path))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	set, err := FromGGUF(f)
	require.NoError(t, err)
	require.Equal(t, []string{"default", "tool_use"}, set.Names())
	tmpl, err := set.Template(path, "tool_use")
	require.NoError(t, err)
	out, err := tmpl.Render(Context{})
	require.NoError(t, err)
	require.Equal(t, "tools", out)
	_, err = set.Template(path, "rag")
	require.ErrorContains(t, err, `no chat template named "rag"; it has default, tool_use`)

	w = gguf.NewWriter()
	w.AddUint32(GGUFKey, 7)
	require.NoError(t, w.WriteFile(path))
	f2, err := gguf.Open(path)
	require.NoError(t, err)
	defer f2.Close()
	_, err = FromGGUF(f2)
	require.ErrorContains(t, err, "tokenizer.chat_template is uint32, want a string")

	tc, err := ParseTokenizerConfig("tc.json", []byte(`{"chat_template": [{"name": "default", "template": "A"}, {"name": "rag", "template": "B"}],
		"bos_token": {"content": "<s>", "lstrip": false}, "eos_token": "</s>"}`))
	require.NoError(t, err)
	require.Equal(t, Set{"default": "A", "rag": "B"}, tc.Templates)
	require.Equal(t, "<s>", tc.BOSToken)
	require.Equal(t, "</s>", tc.EOSToken)
	tc, err = ParseTokenizerConfig("tc.json", []byte(`{"bos_token": null}`))
	require.NoError(t, err)
	require.Empty(t, tc.Templates)
	_, err = tc.Templates.Template("tc.json", "")
	require.ErrorContains(t, err, "tc.json has no chat template")
	for _, bad := range []string{`{"chat_template": 3}`, `{"chat_template": [{"name": "x"}]}`, `{"bos_token": 1}`, `[`} {
		_, err := ParseTokenizerConfig("tc.json", []byte(bad))
		require.ErrorContains(t, err, "tc.json", bad)
	}

	file := filepath.Join(t.TempDir(), "t.jinja")
	require.NoError(t, os.WriteFile(file, []byte("{{ messages[0].content }}\n"), 0o644))
	tmpl, err = ReadFile(file)
	require.NoError(t, err)
	out, err = tmpl.Render(Context{Messages: []any{Object{{"content", "hi"}}}})
	require.NoError(t, err)
	require.Equal(t, "hi", out)
}

// FuzzTemplate: any template source and messages give a render or an error, never a panic.
func FuzzTemplate(f *testing.F) {
	f.Add(`{% for m in messages %}{{ m.role | tojson(indent=2) }}{{ m.content.strip() }}{% endfor %}`, `[{"role": "user", "content": " hi "}]`)
	f.Add(`{{ (a if b else c) | tojson }}`, `[]`)
	f.Add(`{{ x | selectattr('y') | list }}{% set ns = namespace(a=1) %}{{ ns.a }}`, `[{"a": [1, {"b": 2}]}]`)
	f.Fuzz(func(t *testing.T, src, msgs string) {
		tmpl, err := Parse("fuzz", src)
		if err != nil {
			return
		}
		v, err := DecodeJSON([]byte(msgs))
		list, ok := v.([]any)
		if err != nil || !ok {
			list = nil
		}
		tmpl.Render(Context{Messages: list, Vars: map[string]any{"x": v}})
	})
}

// Python's string methods and the Jinja constructs chat templates use; the expected string
// is Python Jinja2 3.1.6's render (trim_blocks, lstrip_blocks) of the same source.
func TestPythonStringMethodsAndJinjaAsPython(t *testing.T) {
	t.Parallel()

	src := `{{ ' a b '.strip() }}|{{ 'a,b'.split(',') }}|{{ 'hello world'.title() }}|{{ 'abc'.startswith('ab') }}|{{ 'abc'.endswith('c') }}|{{ 'AbC'.lower() }}{{ 'x'.upper() }}|{{ 'a-b'.replace('-', '+') }}|{{ '  x'.lstrip() }}|{{ 'x  '.rstrip() }}|{{ 'a b  c'.split() }}|{{ 'hello'.capitalize() }}|{{ 'banana'.count('a') }}|{{ 'banana'.find('n') }}|{{ messages[0]['content'].strip().split('\n')[0] }}|{{ (messages | selectattr('role', 'equalto', 'user') | list | length) }}|{{ messages[-1].role }}|{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}{{ ns.n }}|{{ messages | map(attribute='role') | join(',') }}|{{ 'x' if messages else 'y' }}|{{ messages[1:] | length }}|{{ 'abc'[::-1] }}|{{ {'a': 1}.get('b', 2) }}`
	out, err := render(t, src, Context{Messages: []any{
		Object{{"role", "system"}, {"content", "  First line\nsecond  "}},
		Object{{"role", "user"}, {"content", "hi"}},
	}})
	require.NoError(t, err)
	require.Equal(t, "a b|['a', 'b']|Hello World|True|True|abcX|a+b|x|x|['a', 'b', 'c']|Hello|3|2|First line|1|user|2|system,user|x|1|cba|2", out)
}
