package hub

import "fmt"

// StaleCacheError says that the file cached for a reference does not have the sha256 the
// caller expects: Options.Force downloads it again.
type StaleCacheError struct {
	Ref, Path string // the reference and its cached file
	Got, Want string // the file's sha256 and the expected one
}

// Error names the reference, the cached file and both checksums.
func (e *StaleCacheError) Error() string {
	return fmt.Sprintf("%s: the cached file %s has sha256 %s, expected %s: download it again", e.Ref, e.Path, e.Got, e.Want)
}
