package chat

import "github.com/kvref/kvref/internal/writefile"

// SaveFile writes the conversation (Save) to the file at path, creating or truncating it.
func (s *Session) SaveFile(path string) error { return writefile.Write(path, s.Save) }
