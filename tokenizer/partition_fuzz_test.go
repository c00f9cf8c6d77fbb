package tokenizer

import (
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

// partitionTokens are the added tokens FuzzPartition splits out: overlapping
// contents, every flag, special and not.
var partitionTokens = []*addedToken{
	{content: "<s>", id: 1, special: true},
	{content: "</s>", id: 2, special: true, rstrip: true},
	{content: "<|im", id: 3, special: true},
	{content: "<|im_start|>", id: 4, special: true, lstrip: true},
	{content: "<user>", id: 5, lstrip: true, rstrip: true},
	{content: "cat", id: 6, singleWord: true},
	{content: "a", id: 7},
}

// FuzzPartition checks both ways of splitting added tokens out of text
// (llama.cpp's and Hugging Face's): gluing the fragments back together (a
// token as its content) gives the input, less only whitespace beside tokens
// that strip; special tokens come out only when parsing them; and, for
// llama.cpp's, no text fragment still holds a token it may split out.
func FuzzPartition(f *testing.F) {
	for _, s := range []string{"", "<s>a</s>  b", " <|im_start|>user<|im_end|>", "x <user> y", "cat concat cat", "<<s>>", "<|im<|im_start|>", "\t</s>\u00a0x"} {
		f.Add(s)
	}
	byLength := append([]*addedToken(nil), partitionTokens...)
	sortByLength(byLength)
	trie := newTokenTrie(partitionTokens)
	content := map[int]string{}
	for _, tok := range partitionTokens {
		content[tok.id] = tok.content
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, parse := range []bool{false, true} {
			for name, frags := range map[string][]textFrag{
				"llama": llamaPartition(text, byLength, parse),
				"hf":    hfPartition(text, trie, parse, true, nil),
			} {
				var glued strings.Builder
				for i, fr := range frags {
					if fr.id < 0 {
						require.Falsef(t, fr.text == "", "%s(%q, %v): empty text fragment %d", name, text, parse, i)
						glued.WriteString(fr.text)
						if name == "llama" {
							for _, tok := range byLength {
								require.Falsef(t, (parse || !tok.special) && strings.Contains(fr.text, tok.content), "llama(%q, %v): fragment %q still holds %q", text, parse, fr.text, tok.content)
							}
						}
						continue
					}
					c, ok := content[fr.id]
					require.Truef(t, ok, "%s(%q): unknown id %d", name, text, fr.id)
					for _, tok := range partitionTokens {
						require.Falsef(t, tok.id == fr.id && tok.special && !parse, "%s(%q, false) split out special token %q", name, text, c)
					}
					glued.WriteString(c)
				}
				require.Equalf(t, dropSpace(text), dropSpace(glued.String()), "%s(%q, %v): fragments glue to %q", name, text, parse, glued.String())
				require.Falsef(t, len(glued.String()) > len(text), "%s(%q, %v): fragments glue to %q, longer than the input", name, text, parse, glued.String())
			}
		}
	})
}

// dropSpace removes Unicode whitespace, which stripping tokens may swallow.
func dropSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
