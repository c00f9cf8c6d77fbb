package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
)

// The transcripts of docs/tutorial.md are made by running their commands. Each is a
// ```console block after a marker comment,
//
//	<!-- transcript: NAME -->
//	```console
//	$ kvref step -m stories260K.gguf -p "Once upon a time" --script docs/tutorial/NAME.txt
//	...what the command prints on stdout...
//	```
//
// TestTutorialTranscripts runs every command again and requires the same output, so the
// tutorial cannot go stale; with -update it rewrites the blocks instead:
//
//	go test ./cmd/kvref -run TestTutorialTranscripts -update

// reTranscript finds a marker and the console block after it.
var reTranscript = regexp.MustCompile("(?s)<!-- transcript: ([a-z0-9-]+) -->\n```console\n(.*?)```\n")

// transcript is one console block of the tutorial.
type transcript struct {
	name    string
	command string // the $ line, without "$ "
	body    string // the whole block: the $ line and the output
	start   int    // byte offsets of body in the document
	end     int
}

// findTranscripts returns the transcripts of a Markdown document in order.
func findTranscripts(t *testing.T, doc string) []transcript {
	t.Helper()
	var out []transcript
	seen := map[string]bool{}
	for _, m := range reTranscript.FindAllStringSubmatchIndex(doc, -1) {
		tr := transcript{name: doc[m[2]:m[3]], body: doc[m[4]:m[5]], start: m[4], end: m[5]}
		first, _, _ := strings.Cut(tr.body, "\n")
		require.True(t, strings.HasPrefix(first, "$ kvref "), "transcript %s must start with a $ kvref line, got %q", tr.name, first)
		require.False(t, seen[tr.name], "two transcripts named %s", tr.name)
		seen[tr.name] = true
		tr.command = strings.TrimPrefix(first, "$ ")
		out = append(out, tr)
	}
	return out
}

// shellWords splits a command line the way a POSIX shell would for the simple commands of
// the tutorial: words separated by spaces, "double" and 'single' quotes. It drops a final
// 2>/dev/null (only stdout is part of a transcript anyway).
func shellWords(line string) ([]string, error) {
	line = strings.TrimSuffix(line, " 2>/dev/null")
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case ' ', '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case '"', '\'':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated %c quote in %q", c, line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case '\\', '$', '`', '|', '>', '<', ';', '&', '*':
			return nil, fmt.Errorf("%q: only plain words, quotes and a final 2>/dev/null are supported", line)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func TestShellWords(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
	}{
		{`kvref step -p "Once upon a time" --top 3`, []string{"kvref", "step", "-p", "Once upon a time", "--top", "3"}},
		{`kvref run -p 'it''s' -n 4 2>/dev/null`, []string{"kvref", "run", "-p", "its", "-n", "4"}},
		{`kvref plan  --preset llama-3-8b`, []string{"kvref", "plan", "--preset", "llama-3-8b"}},
	} {
		got, err := shellWords(tc.line)
		require.NoError(t, err, tc.line)
		require.Equal(t, tc.want, got, tc.line)
	}
	for _, bad := range []string{`kvref step -p "open`, `kvref run | head`, `kvref run > out.txt`, `kvref $(pwd)`} {
		_, err := shellWords(bad)
		require.Error(t, err, bad)
	}
}

// TestTutorialTranscripts regenerates every transcript of docs/tutorial.md and compares it
// with the document (or, with -update, rewrites the document). The commands run where a
// reader would run them: in a directory holding stories260K.gguf and the repository's docs/.
func TestTutorialTranscripts(t *testing.T) {
	model := testutil.Shared(t, "models/stories260K.gguf")
	root := testutil.ModuleRoot(t)
	docPath := filepath.Join(root, "docs", "tutorial.md")
	data, err := os.ReadFile(docPath)
	require.NoError(t, err)
	doc := string(data)
	transcripts := findTranscripts(t, doc)
	require.NotEmpty(t, transcripts, "docs/tutorial.md has no transcripts")

	dir := t.TempDir()
	require.NoError(t, os.Symlink(model, filepath.Join(dir, "stories260K.gguf")))
	require.NoError(t, os.Symlink(filepath.Join(root, "docs"), filepath.Join(dir, "docs")))
	t.Chdir(dir)

	fresh := make([]string, len(transcripts))
	for i, tr := range transcripts {
		words, err := shellWords(tr.command)
		require.NoError(t, err, tr.name)
		require.Equal(t, "kvref", words[0])
		stdout, stderr, code := kvref(t, words[1:]...)
		require.Equal(t, 0, code, "transcript %s: %s\n%s", tr.name, tr.command, stderr)
		// A transcript is stdout; one whose command also writes on stderr says it leaves
		// that out, as a shell would: its command ends with 2>/dev/null (and only then).
		hides := strings.HasSuffix(tr.command, " 2>/dev/null")
		require.False(t, stderr != "" && !hides, "transcript %s leaves out what its command writes on stderr: end it with 2>/dev/null (and say what it was)\n%s", tr.name, stderr)
		require.False(t, stderr == "" && hides, "transcript %s hides a stderr its command does not write: drop its 2>/dev/null", tr.name)
		require.NotContains(t, stdout, "\x1b", "transcript %s has colours", tr.name)
		require.NotContains(t, stdout, "```", "transcript %s would end its block", tr.name)
		fresh[i] = "$ " + tr.command + "\n" + stdout
		if !strings.HasSuffix(fresh[i], "\n") {
			fresh[i] += "\n"
		}
		if !*update {
			require.Equal(t, tr.body, fresh[i], "transcript %s of docs/tutorial.md is stale; regenerate with\n\tgo test ./cmd/kvref -run TestTutorialTranscripts -update", tr.name)
		}
	}
	if *update {
		var b strings.Builder
		last := 0
		for i, tr := range transcripts {
			b.WriteString(doc[last:tr.start])
			b.WriteString(fresh[i])
			last = tr.end
		}
		b.WriteString(doc[last:])
		require.NoError(t, os.WriteFile(docPath, []byte(b.String()), 0o644))
		t.Logf("rewrote %d transcripts of %s", len(transcripts), docPath)
	}
}

// TestTutorialScriptsAreUsed: every script under docs/tutorial/ appears in a transcript,
// and every script a transcript names exists.
func TestTutorialScriptsAreUsed(t *testing.T) {
	root := testutil.ModuleRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "docs", "tutorial.md"))
	require.NoError(t, err)
	used := map[string]bool{}
	for _, tr := range findTranscripts(t, string(data)) {
		words, err := shellWords(tr.command)
		require.NoError(t, err)
		for i, w := range words {
			if w == "--script" && i+1 < len(words) {
				used[words[i+1]] = true
				require.FileExists(t, filepath.Join(root, words[i+1]), "transcript %s", tr.name)
			}
		}
	}
	scripts, err := filepath.Glob(filepath.Join(root, "docs", "tutorial", "*.txt"))
	require.NoError(t, err)
	for _, s := range scripts {
		rel, _ := filepath.Rel(root, s)
		require.True(t, used[filepath.ToSlash(rel)], "%s is in no transcript of docs/tutorial.md", rel)
	}
}
