package server

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/chat"
	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/model/synth"
)

// TestChatBounds: messages, content parts and chat_template_kwargs (keys and bytes) over
// their limits are refused with the limit's flag before anything is rendered (the template
// here raises whenever it renders, so a limit error proves it did not), a request exactly
// at the limits renders, and kwargs may not set the variables kvref sets.
func TestChatBounds(t *testing.T) {
	m := loadShape(t, synth.Tiny)
	dir := t.TempDir()
	file := filepath.Join(dir, "raise.jinja")
	require.NoError(t, os.WriteFile(file, []byte(`{% if messages[0].content == 'raise' %}{{ raise_exception('rendered') }}{% endif %}{% for m in messages %}{{ m.role }}: {{ m.content }}
{% endfor %}{{ k0 }}`), 0o644))
	f, err := chat.NewFormatter(m, chat.TemplateOptions{File: file})
	require.NoError(t, err)
	lim := Limits{MaxMessages: 4, MaxContentParts: 3, MaxKwargs: 2, MaxKwargsBytes: 64}
	ts := startModel(t, m, engine.Config{}, Options{Limits: lim, Chat: f})

	msgs := func(first string, n int) []map[string]any {
		out := []map[string]any{{"role": "user", "content": first}}
		for len(out) < n {
			out = append(out, map[string]any{"role": "user", "content": "x"})
		}
		return out
	}
	parts := func(n int) []map[string]any {
		var out []map[string]any
		for range n {
			out = append(out, map[string]any{"type": "text", "text": "p"})
		}
		return out
	}
	kw := func(n int) map[string]any {
		out := map[string]any{}
		for i := range n {
			out[fmt.Sprintf("k%d", i)] = "v"
		}
		return out
	}
	// At every limit: rendered.
	ts.chat(t, map[string]any{"messages": append(msgs("a", 3), map[string]any{"role": "user", "content": parts(3)}), "chat_template_kwargs": kw(2), "max_tokens": 1})
	e := ts.apiError(t, "/v1/chat/completions", map[string]any{"messages": msgs("raise", 1), "max_tokens": 1}, http.StatusBadRequest)
	require.Contains(t, e.Message, "rendered", "the template raises when it renders")

	cases := []struct {
		name, param, flag, want string
		body                    map[string]any
	}{
		{"messages", "messages", "--max-messages", "messages has more than 4 messages, at most 4", map[string]any{"messages": msgs("raise", 5)}},
		{"parts", "messages[1].content", "--max-content-parts", "messages[1].content has more than 3 parts", map[string]any{"messages": []any{msgs("raise", 1)[0], map[string]any{"role": "user", "content": parts(4)}}}},
		{"kwargs", "chat_template_kwargs", "--max-template-kwargs", "more than 2 keys", map[string]any{"messages": msgs("raise", 1), "chat_template_kwargs": kw(3)}},
		{"kwargs bytes", "chat_template_kwargs", "--max-template-kwargs-bytes", "at most 64 are allowed", map[string]any{"messages": msgs("raise", 1), "chat_template_kwargs": map[string]any{"k0": strings.Repeat("v", 64)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := ts.apiError(t, "/v1/chat/completions", c.body, http.StatusBadRequest)
			require.Equal(t, "limit_exceeded", *e.Code)
			require.Equal(t, c.param, *e.Param)
			require.Contains(t, e.Message, c.want)
			require.Contains(t, e.Message, "kvref serve "+c.flag)
		})
	}
	for _, key := range []string{"messages", "bos_token", "eos_token", "add_generation_prompt", "tools", "raise_exception"} {
		t.Run("reserved "+key, func(t *testing.T) {
			e := ts.apiError(t, "/v1/chat/completions", map[string]any{"messages": msgs("raise", 1), "chat_template_kwargs": map[string]any{key: []any{}}}, http.StatusBadRequest)
			require.Equal(t, "reserved_template_variable", *e.Code)
			require.Equal(t, "chat_template_kwargs", *e.Param)
			require.Contains(t, e.Message, fmt.Sprintf("may not set %q", key))
		})
	}
	e = ts.apiError(t, "/v1/chat/completions", map[string]any{"messages": msgs("a", 1), "chat_template_kwargs": []int{1}}, http.StatusBadRequest)
	require.Contains(t, e.Message, "chat_template_kwargs must be an object")
}
