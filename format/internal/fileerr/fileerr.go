// Package fileerr words the errors of the file-format readers (format/gguf,
// format/safetensors) in one style: "FORMAT: FILE: message", with names that come from
// the file quoted and shortened so that a hostile file cannot produce megabyte-long
// errors.
package fileerr

import (
	"fmt"
	"strconv"
)

// MaxQuoted bounds how much of a name from the file goes into an error message.
const MaxQuoted = 96

// Quote quotes a key or tensor name for an error message, shortening it to MaxQuoted
// bytes (and saying how long it was) if it is longer.
func Quote(s string) string {
	if len(s) <= MaxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:MaxQuoted]) + fmt.Sprintf("... (%d bytes)", len(s))
}

// Errorf formats an error about the file named name read as format ("gguf",
// "safetensors"): "FORMAT: NAME: message". A %w verb in msg wraps as in fmt.Errorf.
func Errorf(format, name, msg string, args ...any) error {
	return fmt.Errorf(format+": %s: "+msg, append([]any{name}, args...)...)
}
