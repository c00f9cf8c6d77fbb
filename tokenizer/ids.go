package tokenizer

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ParseIDs reads token ids written as a JSON array ("[1, 15043]") or
// separated by spaces and/or commas ("1 15043", "1,15043"), and checks that
// each is an id of tok. The error names the first bad element and its
// position.
func ParseIDs(s string, tok Tokenizer) ([]int, error) {
	var fields []string
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "[") {
		var raw []json.Number
		dec := json.NewDecoder(strings.NewReader(t))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("token ids %q are not a JSON array of integers: %v", shorten(t, 40), err)
		}
		for _, n := range raw {
			fields = append(fields, n.String())
		}
	} else {
		fields = strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' })
	}
	ids := make([]int, len(fields))
	for i, f := range fields {
		id, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("token id %d (%q) is not an integer", i, shorten(f, 20))
		}
		if id < 0 || id >= tok.VocabSize() {
			return nil, fmt.Errorf("token id %d (%d) is outside the vocabulary [0, %d)", i, id, tok.VocabSize())
		}
		ids[i] = id
	}
	return ids, nil
}
