package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
)

// reDocCommand finds a kvref command line of a Markdown document: `go run ./cmd/kvref ...`,
// `kvref ...` or `$ kvref ...` at the start of a line.
var reDocCommand = regexp.MustCompile(`(?m)^(?:\$ )?(?:go run \./cmd/kvref|kvref) ([a-z]+)((?:[^\n\\]|\\\n)*)`)

// TestDocCommandsAreTrue: every kvref command line in README.md and docs/*.md names a
// command that exists and only flags that command defines (the tutorial's transcripts and
// the README's first command are also run: TestTutorialTranscripts, TestRunBuiltinModel).
func TestDocCommandsAreTrue(t *testing.T) {
	root := testutil.ModuleRoot(t)
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	flagsOf := map[string]map[string]bool{}
	for _, c := range commands() {
		out, _, code := kvref(t, "help", c.name)
		require.Equal(t, 0, code)
		flagsOf[c.name] = map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^  (-[^ ,\n]+(?:, -[^ ,\n]+)*)`).FindAllStringSubmatch(out, -1) {
			for _, name := range strings.Split(m[1], ", ") {
				flagsOf[c.name][strings.TrimLeft(name, "-")] = true
			}
		}
	}
	checked := 0
	for _, path := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		text, err := os.ReadFile(path)
		require.NoError(t, err)
		doc := filepath.Base(path)
		var blocks strings.Builder // the fenced code blocks: prose may start a line with "kvref"
		for i, part := range strings.Split(string(text), "\n```") {
			if i%2 == 1 {
				blocks.WriteString(part + "\n")
			}
		}
		for _, m := range reDocCommand.FindAllStringSubmatch(blocks.String(), -1) {
			cmd, rest := m[1], strings.ReplaceAll(m[2], "\\\n", " ")
			if _, ok := flagsOf[cmd]; !ok {
				if cmd == "help" || cmd == "version" {
					continue
				}
				require.FailNow(t, fmt.Sprintf("%s: kvref %s: no such command", doc, cmd))
				continue
			}
			rest, _, _ = strings.Cut(rest, " #") // a comment
			for _, sep := range []string{"&&", "|", ";", ">", "`"} {
				rest, _, _ = strings.Cut(rest, sep)
			}
			for _, w := range strings.Fields(rest) {
				if w == "--" {
					break
				}
				name, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
				if !strings.HasPrefix(w, "-") || name == "" || name == "h" || name == "help" {
					continue
				}
				if _, err := strconv.ParseFloat(w, 64); err == nil {
					continue // a negative number: a flag's value
				}
				if strings.ContainsAny(name, `"'.[]`) {
					continue // placeholder syntax, such as [-m MODEL] written as a word
				}
				require.True(t, flagsOf[cmd][name], "%s: kvref %s has no flag %s (%q)", doc, cmd, w, m[0])
			}
			checked++
		}
	}
	require.Greater(t, checked, 40, "the command lines of the docs were found")
}
