package chat

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/builtin"
)

// TestRendered describes a rendered prompt with the formatter's template and stops, under
// the JSON names kvref template --json documents.
func TestRendered(t *testing.T) {
	t.Parallel()

	stories, err := builtin.Model()
	require.NoError(t, err)
	f, err := NewFormatter(stories, TemplateOptions{})
	require.NoError(t, err)
	text, ids, err := f.Prompt([]any{map[string]any{"role": "user", "content": "hi"}}, true)
	require.NoError(t, err)
	r := f.Rendered(text, ids)
	require.Equal(t, f.Template.Name, r.Template)
	require.Equal(t, text, r.Prompt)
	require.Equal(t, len(ids), r.Tokens)
	require.Equal(t, f.EndOfTurn, r.EndOfTurn)
	b, err := json.Marshal(r)
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, json.Unmarshal(b, &back))
	require.Contains(t, back, "token_ids")
	require.Contains(t, back, "tokens")
	require.Contains(t, back, "template")
}
