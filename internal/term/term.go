// Package term says whether output goes to a terminal, for the progress bars and colours
// that only a terminal gets.
package term

import "os"

// IsTerminal reports whether f is an *os.File open on a character device, such as a
// terminal.
func IsTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
