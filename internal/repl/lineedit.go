package repl

import (
	"io"
	"os"
	"strings"

	xterm "golang.org/x/term"
)

// Line editing for kvref chat and kvref step on a terminal: the arrow keys move in the line
// and go through the session's history (Up recalls the previous line), Home/End or
// Ctrl-A/Ctrl-E jump, Ctrl-U/Ctrl-K/Ctrl-W cut, Alt-←/→ move by words, Ctrl-D on an empty
// line (or Ctrl-C) ends the session. It is golang.org/x/term's Terminal: the Go team's own
// package, which kvref already depends on through golang.org/x/sys and nothing else, with
// a pluggable History; the terminal is in raw mode only while a line is read, so what a
// command prints, and Ctrl-C while the model generates, behave as without editing. Scripts
// and pipes never get it: they are read line by line, as before.

// LineReader reads one line after showing prompt; io.EOF ends the input.
type LineReader interface {
	ReadLine(prompt string) (string, error)
}

// LineEditor is a LineReader over a terminal.
type LineEditor struct {
	t   *xterm.Terminal
	raw func() (restore func(), err error) // puts the terminal in raw mode for one line
	fit func(t *xterm.Terminal)            // sets the terminal's width
}

// NewTerminalEditor returns an editor on the process's terminal, or nil when stdin and
// stdout are not both terminals or TERM is "dumb".
func NewTerminalEditor() LineReader {
	in, out := int(os.Stdin.Fd()), int(os.Stdout.Fd())
	if !xterm.IsTerminal(in) || !xterm.IsTerminal(out) || os.Getenv("TERM") == "dumb" {
		return nil
	}
	rw := struct {
		io.Reader
		io.Writer
	}{os.Stdin, os.Stdout}
	return NewEditor(rw, func() (func(), error) {
		st, err := xterm.MakeRaw(in)
		if err != nil {
			return nil, err
		}
		return func() { xterm.Restore(in, st) }, nil
	}, func(t *xterm.Terminal) {
		if w, h, err := xterm.GetSize(out); err == nil {
			t.SetSize(w, h)
		}
	})
}

// NewEditor returns an editor reading keys from rw and drawing on it; raw puts the terminal
// in raw mode for one line and returns what restores it, and fit (nil: none) sets the
// terminal's width before each line.
func NewEditor(rw io.ReadWriter, raw func() (func(), error), fit func(*xterm.Terminal)) *LineEditor {
	t := xterm.NewTerminal(rw, "")
	t.History = &history{max: 500}
	return &LineEditor{t: t, raw: raw, fit: fit}
}

// ReadLine shows prompt and reads one edited line, in raw mode only while it reads.
func (e *LineEditor) ReadLine(prompt string) (string, error) {
	restore, err := e.raw()
	if err != nil {
		return "", err
	}
	defer restore()
	if e.fit != nil {
		e.fit(e.t)
	}
	e.t.SetPrompt(prompt)
	line, err := e.t.ReadLine()
	if err == xterm.ErrPasteIndicator { // a pasted line is a line like any other
		err = nil
	}
	return line, err
}

// history keeps the last max lines typed, leaving out blank lines (Enter in kvref step)
// and a line equal to the one before.
type history struct {
	lines []string // oldest first
	max   int
}

// Add records a line typed.
func (h *history) Add(line string) {
	if strings.TrimSpace(line) == "" || (len(h.lines) > 0 && h.lines[len(h.lines)-1] == line) {
		return
	}
	if len(h.lines) == h.max {
		h.lines = h.lines[1:]
	}
	h.lines = append(h.lines, line)
}

// Len is the number of lines kept.
func (h *history) Len() int { return len(h.lines) }

// At returns the idx-th most recent line (0: the last).
func (h *history) At(idx int) string { return h.lines[len(h.lines)-1-idx] }
