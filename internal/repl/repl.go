// Package repl reads command lines and runs them, for kvref step and kvref chat: on a
// terminal with line editing and history, from a script with each line echoed after the
// prompt, as the interactive session would read.
package repl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/kvref/kvref/cacheview/textview"
	"github.com/kvref/kvref/internal/term"
)

// REPL reads command lines and runs them, for kvref step and kvref chat. Interactively (a
// terminal) it shows the prompt before each line, and a failing command prints its error
// while the session goes on, unless the error is a FatalError. From a script (a file, or
// stdin when it is not a terminal) it echoes each line after the prompt, so that the
// output reads like the interactive session; lines starting with # are comments, echoed as
// they are (they narrate a tutorial's transcript), and the first failing command ends the
// run with an error naming its line, so that a broken script cannot pass unnoticed. ErrQuit
// from Exec, or the end of the input, ends the session without an error. On a terminal
// (stdin and stdout) lines are read with editing and history (lineedit.go).
type REPL struct {
	Out    io.Writer
	Prompt func() string                  // shown before each line, followed by a space
	Exec   func(line string) error        // runs one line, spaces trimmed
	Paint  func(code, text string) string // colours the prompt and errors; nil: none
	Flush  func()                         // called before each line is read; nil: none
	// Editor reads an interactive session's lines with editing and history (lineedit.go);
	// nil: one on the terminal when stdin and stdout are both terminals, else plain reads.
	Editor LineReader
}

// ErrQuit ends a session without an error; it is the console's quit (textview.ErrQuit).
var ErrQuit = textview.ErrQuit

// FatalError wraps an error after which the session's state can no longer be trusted
// (a failed forward pass): the session ends even when interactive.
type FatalError struct{ Err error }

// Error is the wrapped error's text.
func (e FatalError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e FatalError) Unwrap() error { return e.Err }

// Run reads the lines of in (named name in a script's errors) until its end or ErrQuit.
func (r REPL) Run(in io.Reader, name string, interactive bool) error {
	paint := r.Paint
	if paint == nil {
		paint = func(_, text string) string { return text }
	}
	editor := r.Editor
	if interactive && editor == nil {
		if e := NewTerminalEditor(); e != nil {
			editor = e
		}
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for n := 1; ; n++ {
		var line string
		if interactive && editor != nil {
			if r.Flush != nil {
				r.Flush()
			}
			l, err := editor.ReadLine(paint(textview.Bold, r.Prompt()) + " ")
			if errors.Is(err, io.EOF) {
				fmt.Fprintln(r.Out)
				return nil
			}
			if err != nil {
				return err
			}
			line = strings.TrimSpace(l)
		} else {
			if interactive {
				fmt.Fprint(r.Out, paint(textview.Bold, r.Prompt())+" ")
			}
			if r.Flush != nil {
				r.Flush()
			}
			if !sc.Scan() {
				if interactive {
					fmt.Fprintln(r.Out)
				}
				return sc.Err()
			}
			line = strings.TrimSpace(sc.Text())
		}
		if !interactive {
			if strings.HasPrefix(line, "#") {
				fmt.Fprintln(r.Out, line)
				continue
			}
			fmt.Fprintln(r.Out, strings.TrimRight(r.Prompt()+" "+line, " "))
		}
		err := r.Exec(line)
		switch {
		case err == nil:
		case errors.Is(err, ErrQuit):
			return nil
		case !interactive:
			return fmt.Errorf("%s:%d: %s: %w", name, n, strconv.Quote(line), err)
		case errors.As(err, new(FatalError)):
			return err
		default:
			fmt.Fprintln(r.Out, paint(textview.Red, "error: "+err.Error()))
		}
	}
}

// OpenInput opens the script a session reads its lines from, or stdin when script is
// empty; interactive says whether that is a terminal.
func OpenInput(script string) (in io.ReadCloser, name string, interactive bool, err error) {
	if script == "" {
		return io.NopCloser(os.Stdin), "stdin", term.IsTerminal(os.Stdin), nil
	}
	f, err := os.Open(script)
	return f, script, false, err
}
