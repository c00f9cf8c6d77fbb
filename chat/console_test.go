package chat

import (
	"bufio"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/repl"
)

// TestConsole runs a chat's lines: a message prints its reply and the turn's cache line,
// the commands print what they did or return their error, and /quit returns repl.ErrQuit.
func TestConsole(t *testing.T) {
	m := chatModel(t, ChatML, 512)
	s := newSession(t, m, 4)
	var b strings.Builder
	out := bufio.NewWriter(&b)
	c := &Console{Session: s, Out: out}
	run := func(line string) (string, error) {
		b.Reset()
		err := c.Exec(line)
		out.Flush()
		return b.String(), err
	}

	got, err := run("hello")
	require.NoError(t, err)
	require.Regexp(t, `\n  \[cache: 0 of \d+ prompt tokens reused, \d+ computed, \d+ generated · \d+ blocks in use, \d+ B · \d+ tokens cached for the next turn\]\n$`, got)
	got, err = run("/stats")
	require.NoError(t, err)
	require.Contains(t, got, "  turns     1\n")
	require.Contains(t, got, "  pool      ")

	path := filepath.Join(t.TempDir(), "chat.json")
	got, err = run("/save " + path)
	require.NoError(t, err)
	require.Equal(t, "(saved 3 messages to "+path+")\n", got)
	_, err = run("/save")
	require.EqualError(t, err, "/save needs a FILE")

	got, err = run("/reset")
	require.NoError(t, err)
	require.Equal(t, "(a new conversation)\n", got)
	require.Empty(t, s.Turns())

	got, err = run("/help")
	require.NoError(t, err)
	require.Equal(t, Commands+"\n", got)
	_, err = run("/frobnicate")
	require.ErrorContains(t, err, "unknown command /frobnicate")
	_, err = run("/quit")
	require.ErrorIs(t, err, repl.ErrQuit)
	got, err = run("")
	require.NoError(t, err)
	require.Empty(t, got)
}

// TestConsoleHint: an error of Send goes through Hint.
func TestConsoleHint(t *testing.T) {
	m := chatModel(t, ChatML, 64)
	s := newSession(t, m, 4)
	s.System = strings.Repeat("a long system message ", 20)
	hinted := errors.New("hinted")
	c := &Console{Session: s, Out: bufio.NewWriter(&strings.Builder{}), Hint: func(err error) error { return errors.Join(hinted, err) }}
	require.ErrorIs(t, c.Exec("hello"), hinted)
}
