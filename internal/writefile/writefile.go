// Package writefile writes a file through a function that takes an io.Writer, so that
// every "create, write, close, and report the first error" is the same four lines.
package writefile

import (
	"io"
	"os"
)

// Write creates (or truncates) the file at path, lets write fill it and closes it. It
// returns the first error: creating, writing, or closing (a full disk can show only there).
func Write(path string, write func(w io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
