package tokenizer

// Lookup finds the token a person means by text: the first id whose piece (the text it adds
// in a stream, " big", "\n") is text, else the first whose vocabulary entry is text (for
// tokens that add no text, such as </s>). ok is false when no token is text.
func Lookup(t Tokenizer, text string) (id int, ok bool) {
	n := t.VocabSize()
	for id := range n {
		if p := t.Piece(id); len(p) > 0 && string(p) == text {
			return id, true
		}
	}
	for id := range n {
		if t.TokenText(id) == text {
			return id, true
		}
	}
	return 0, false
}
