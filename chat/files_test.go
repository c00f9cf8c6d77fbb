package chat

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/tokenizer/chattemplate"
)

// TestReadMessagesAndVarsFiles: messages keep their keys' order, variables become a map,
// and a file of the wrong shape or not JSON is refused with its name.
func TestReadMessagesAndVarsFiles(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	msgs, err := ReadMessagesFile(write("m.json", `[{"content": "hi", "role": "user"}]`))
	require.NoError(t, err)
	require.Equal(t, []any{chattemplate.Object{{Key: "content", Value: "hi"}, {Key: "role", Value: "user"}}}, msgs)
	vars, err := ReadVarsFile(write("v.json", `{"enable_thinking": false, "date_string": "26 Jul 2024"}`))
	require.NoError(t, err)
	require.Equal(t, map[string]any{"enable_thinking": false, "date_string": "26 Jul 2024"}, vars)

	obj := write("o.json", `{"role": "user"}`)
	_, err = ReadMessagesFile(obj)
	require.ErrorContains(t, err, obj+": want a JSON array of messages")
	_, err = ReadVarsFile(write("a.json", `[1]`))
	require.ErrorContains(t, err, "want a JSON object of variables")
	bad := write("bad.json", `[{`)
	_, err = ReadMessagesFile(bad)
	require.ErrorContains(t, err, bad)
	_, err = ReadVarsFile(filepath.Join(dir, "missing.json"))
	require.ErrorIs(t, err, os.ErrNotExist)
}
