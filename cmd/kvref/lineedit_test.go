package main

import (
	"bytes"
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
	ed := newEditor(tty, func() (func(), error) {
		require.Equal(t, raw, restored, "raw mode is entered once per line")
		raw++
		return func() { restored++ }, nil
	}, nil)
	var got []string
	var out bytes.Buffer
	r := repl{out: &out, prompt: func() string { return ">" }, editor: ed,
		exec: func(line string) error { got = append(got, line); return nil }}
	require.NoError(t, r.run(strings.NewReader("not read: the editor reads the terminal"), "stdin", true))
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
	ed := newEditor(&fakeTTY{keys: strings.NewReader("")}, func() (func(), error) {
		require.FailNow(t, "a script must not touch the terminal")
		return nil, nil
	}, nil)
	r := repl{out: &out, prompt: func() string { return ">" }, editor: ed,
		exec: func(line string) error { got = append(got, line); return nil }}
	require.NoError(t, r.run(strings.NewReader("hello\n\x1b[A\n"), "script", false))
	require.Equal(t, []string{"hello", "\x1b[A"}, got)
	require.Equal(t, "> hello\n> \x1b[A\n", out.String())
}
