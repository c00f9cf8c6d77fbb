package repl

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeTTY is a terminal's two ends: the keys typed, and what the editor draws.
type fakeTTY struct {
	keys  *strings.Reader
	drawn bytes.Buffer
}

func (f *fakeTTY) Read(p []byte) (int, error)  { return f.keys.Read(p) }
func (f *fakeTTY) Write(p []byte) (int, error) { return f.drawn.Write(p) }

// TestLineEditingRecallsHistory: on a terminal, Up recalls the lines typed before (blank
// lines and repeats left out), ← moves in the line to edit it, Ctrl-D ends the session,
// the prompt is drawn by the editor, and the terminal is in raw mode only while a line is
// read.
func TestLineEditingRecallsHistory(t *testing.T) {
	tty := &fakeTTY{keys: strings.NewReader("hello\r" + "\x1b[A\r" + "\r" + "\x1b[A\x1b[D\x1b[DX\r" + "bye\r" + "\x1b[A\x1b[A\r" + "\x04")}
	raw, restored := 0, 0
	ed := NewEditor(tty, func() (func(), error) {
		require.Equal(t, raw, restored, "raw mode is entered once per line")
		raw++
		return func() { restored++ }, nil
	}, nil)
	var got []string
	var out bytes.Buffer
	r := REPL{Out: &out, Prompt: func() string { return ">" }, Editor: ed,
		Exec: func(line string) error { got = append(got, line); return nil }}
	require.NoError(t, r.Run(strings.NewReader("not read: the editor reads the terminal"), "stdin", true))
	require.Equal(t, []string{"hello", "hello", "", "helXlo", "bye", "helXlo"}, got)
	require.Equal(t, 7, raw, "six lines and the Ctrl-D")
	require.Equal(t, raw, restored, "the terminal is restored after every line")
	require.Equal(t, 7, strings.Count(tty.drawn.String(), "> "), "the editor draws the prompt before each line")
	require.Equal(t, "\n", out.String(), "the session's output gets only the last newline")
}

// TestScriptsDoNotGetTheEditor: input that is not a terminal is read line by line and
// echoed, whatever editor there is: an escape sequence in a script is text.
func TestScriptsDoNotGetTheEditor(t *testing.T) {
	var got []string
	var out bytes.Buffer
	ed := NewEditor(&fakeTTY{keys: strings.NewReader("")}, func() (func(), error) {
		require.FailNow(t, "a script must not touch the terminal")
		return nil, nil
	}, nil)
	r := REPL{Out: &out, Prompt: func() string { return ">" }, Editor: ed,
		Exec: func(line string) error { got = append(got, line); return nil }}
	require.NoError(t, r.Run(strings.NewReader("hello\n\x1b[A\n"), "script", false))
	require.Equal(t, []string{"hello", "\x1b[A"}, got)
	require.Equal(t, "> hello\n> \x1b[A\n", out.String())
}

// TestRunErrors: a script stops at its first failing line, named by number; a terminal
// session prints the error and goes on, unless it is a FatalError; ErrQuit ends either
// without an error; # lines of a script are echoed and not run.
func TestRunErrors(t *testing.T) {
	bad := errors.New("no such command")
	exec := func(line string) error {
		switch line {
		case "bad":
			return bad
		case "fatal":
			return FatalError{Err: bad}
		case "quit":
			return ErrQuit
		}
		return nil
	}
	var out bytes.Buffer
	r := REPL{Out: &out, Prompt: func() string { return ">" }, Exec: exec}
	err := r.Run(strings.NewReader("# a comment\nok\nbad\nnot reached\n"), "demo.txt", false)
	require.ErrorIs(t, err, bad)
	require.EqualError(t, err, `demo.txt:3: "bad": no such command`)
	require.Equal(t, "# a comment\n> ok\n> bad\n", out.String())

	out.Reset()
	r.Editor = NewEditor(&fakeTTY{keys: strings.NewReader("bad\rquit\rnot reached\r")}, func() (func(), error) { return func() {}, nil }, nil)
	require.NoError(t, r.Run(nil, "stdin", true))
	require.Equal(t, "error: no such command\n", out.String())

	r.Editor = NewEditor(&fakeTTY{keys: strings.NewReader("fatal\rnot reached\r")}, func() (func(), error) { return func() {}, nil }, nil)
	require.ErrorAs(t, r.Run(nil, "stdin", true), new(FatalError))
}
