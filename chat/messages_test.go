package chat

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/tokenizer/chattemplate"
)

func TestParseMessages(t *testing.T) {
	msgs, err := ParseMessages([]byte(`[{"role": "system", "content": "Be brief."}, {"role": "user", "name": "ann", "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "there"}]}]`))
	require.NoError(t, err)
	require.Equal(t, []any{
		chattemplate.Object{{Key: "role", Value: "system"}, {Key: "content", Value: "Be brief."}},
		chattemplate.Object{{Key: "role", Value: "user"}, {Key: "name", Value: "ann"}, {Key: "content", Value: "Hi\nthere"}},
	}, msgs)

	for _, tc := range []struct{ in, field, msg string }{
		{``, "messages", "is required"},
		{`[]`, "messages", "is empty"},
		{`{"role": "user"}`, "messages", "must be an array of messages, got an object"},
		{`["hi"]`, "messages[0]", "must be an object"},
		{`[{"content": "hi"}]`, "messages[0].role", "is missing"},
		{`[{"role": 1, "content": "hi"}]`, "messages[0].role", "must be a string, got a number"},
		{`[{"role": "user", "content": "a"}, {"role": "robot", "content": "hi"}]`, "messages[1].role", `"robot" is not a role; use one of system, user, assistant`},
		{`[{"role": "tool", "content": "42", "tool_call_id": "x"}]`, "messages[0].role", "executes no tools"},
		{`[{"role": "assistant", "content": null, "tool_calls": [{"id": "1"}]}]`, "messages[0].tool_calls", "executes no tools"},
		{`[{"role": "user"}]`, "messages[0].content", "is missing"},
		{`[{"role": "user", "content": null}]`, "messages[0].content", "is missing"},
		{`[{"role": "user", "content": 3}]`, "messages[0].content", "must be a string or an array of text parts, got a number"},
		{`[{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]`, "messages[0].content[0]", "is an image"},
		{`[{"role": "user", "content": [{"type": "input_audio"}]}]`, "messages[0].content[0]", "input_audio part"},
		{`[{"role": "user", "content": [{"type": "text", "text": 5}]}]`, "messages[0].content[0].text", "must be a string"},
		{`[{"role": "user", "content": [{"type": "mystery"}]}]`, "messages[0].content[0].type", `must be "text", got "mystery"`},
		{`[{"role": "user", "content": ["hi"]}]`, "messages[0].content[0]", "must be a content part object"},
		{`[{"role": "user", "content": "hi"}`, "messages", "is not valid JSON"},
	} {
		_, err := ParseMessages([]byte(tc.in))
		var me *MessageError
		require.True(t, errors.As(err, &me), "%s: %v", tc.in, err)
		require.Equal(t, tc.field, me.Field, tc.in)
		require.Contains(t, me.Message, tc.msg, tc.in)
	}
}
