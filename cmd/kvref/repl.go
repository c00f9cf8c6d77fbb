package main

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

// repl reads command lines and runs them, for kvref step and kvref chat. Interactively (a
// terminal) it shows the prompt before each line, and a failing command prints its error
// while the session goes on, unless the error is a fatalError. From a script (a file, or
// stdin when it is not a terminal) it echoes each line after the prompt, so that the
// output reads like the interactive session; lines starting with # are comments, echoed as
// they are (they narrate a tutorial's transcript), and the first failing command ends the
// run with an error naming its line, so that a broken script cannot pass unnoticed. errQuit
// from exec, or the end of the input, ends the session without an error. On a terminal
// (stdin and stdout) lines are read with editing and history (lineedit.go).
type repl struct {
	out    io.Writer
	prompt func() string                  // shown before each line, followed by a space
	exec   func(line string) error        // runs one line, spaces trimmed
	paint  func(code, text string) string // colours the prompt and errors; nil: none
	flush  func()                         // called before each line is read; nil: none
	// editor reads an interactive session's lines with editing and history (lineedit.go);
	// nil: one on the terminal when stdin and stdout are both terminals, else plain reads.
	editor lineReader
}

// errQuit ends a session without an error; it is the console's quit (textview.ErrQuit).
var errQuit = textview.ErrQuit

// fatalError wraps an error after which the session's state can no longer be trusted
// (a failed forward pass): the session ends even when interactive.
type fatalError struct{ err error }

func (e fatalError) Error() string { return e.err.Error() }
func (e fatalError) Unwrap() error { return e.err }

// run reads the lines of in (named name in a script's errors) until its end or errQuit.
func (r repl) run(in io.Reader, name string, interactive bool) error {
	paint := r.paint
	if paint == nil {
		paint = func(_, text string) string { return text }
	}
	editor := r.editor
	if interactive && editor == nil {
		if e := newLineEditor(); e != nil {
			editor = e
		}
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	for n := 1; ; n++ {
		var line string
		if interactive && editor != nil {
			if r.flush != nil {
				r.flush()
			}
			l, err := editor.readLine(paint(textview.Bold, r.prompt()) + " ")
			if errors.Is(err, io.EOF) {
				fmt.Fprintln(r.out)
				return nil
			}
			if err != nil {
				return err
			}
			line = strings.TrimSpace(l)
		} else {
			if interactive {
				fmt.Fprint(r.out, paint(textview.Bold, r.prompt())+" ")
			}
			if r.flush != nil {
				r.flush()
			}
			if !sc.Scan() {
				if interactive {
					fmt.Fprintln(r.out)
				}
				return sc.Err()
			}
			line = strings.TrimSpace(sc.Text())
		}
		if !interactive {
			if strings.HasPrefix(line, "#") {
				fmt.Fprintln(r.out, line)
				continue
			}
			fmt.Fprintln(r.out, strings.TrimRight(r.prompt()+" "+line, " "))
		}
		err := r.exec(line)
		switch {
		case err == nil:
		case errors.Is(err, errQuit):
			return nil
		case !interactive:
			return fmt.Errorf("%s:%d: %s: %w", name, n, strconv.Quote(line), err)
		case errors.As(err, new(fatalError)):
			return err
		default:
			fmt.Fprintln(r.out, paint(textview.Red, "error: "+err.Error()))
		}
	}
}

// openInput opens the script a session reads its lines from, or stdin when script is
// empty; interactive says whether that is a terminal.
func openInput(script string) (in io.ReadCloser, name string, interactive bool, err error) {
	if script == "" {
		return io.NopCloser(os.Stdin), "stdin", term.IsTerminal(os.Stdin), nil
	}
	f, err := os.Open(script)
	return f, script, false, err
}
