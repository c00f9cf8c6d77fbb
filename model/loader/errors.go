package loader

import "fmt"

// NoTokenizerError says that a file is not GGUF and has no tokenizer.bin beside it, so it
// cannot be opened as a llama2.c checkpoint either, unless Options.Tokenizer names its
// tokenizer.
type NoTokenizerError struct {
	Path  string
	Magic string // the file's first bytes (at most 4)
}

// Error names the file and what it starts with.
func (e *NoTokenizerError) Error() string {
	return fmt.Sprintf("%s is not a GGUF file (it starts with %q, not \"GGUF\") and has no tokenizer.bin beside it, as a llama2.c checkpoint would", e.Path, e.Magic)
}
