package cli

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFinalNewline: output that ends without a newline gets one when it ends; output that
// ends with one, or no output, gets nothing.
func TestFinalNewline(t *testing.T) {
	for _, c := range []struct{ writes, want string }{
		{"Once upon a time", "Once upon a time\n"},
		{"text\n", "text\n"},
		{"", ""},
	} {
		var b bytes.Buffer
		w := &NewlineWriter{W: &b}
		io.WriteString(w, c.writes)
		w.Finish()
		require.Equal(t, c.want, b.String())
	}
}

// TestNearest: typos within the distance, and prefixes, are suggested; the rest are not.
func TestNearest(t *testing.T) {
	names := []string{"temp", "top-k", "top-p", "seed", "cache-type-k", "prompt-file"}
	for s, want := range map[string]string{
		"temprature": "temp", "temperature": "temp", "tmep": "temp", "sed": "seed",
		"cache-typ-k": "cache-type-k", "promptfile": "prompt-file", "x": "", "zzzzzzzz": "",
	} {
		require.Equal(t, want, Nearest(s, names), s)
	}
}

// TestAliasSharesTheValue: an alias sets the flag it names and is listed with it, once;
// an alias of a flag that does not exist is a programming error.
func TestAliasSharesTheValue(t *testing.T) {
	fs := NewFlags("x", io.Discard)
	var c int
	Group(fs, "engine flags", func() {
		fs.IntVar(&c, "c", 0, "context")
		Alias(fs, "ctx", "c")
	})
	fs.Bool("json", false, "print JSON")
	require.NoError(t, Parse(fs, []string{"--ctx", "7"}))
	require.Equal(t, 7, c)
	es := helpEntries(fs)
	require.Len(t, es, 2)
	var help strings.Builder
	PrintFlags(fs, &help)
	require.Equal(t, "\nflags:\n  --json\n        print JSON\n\nengine flags:\n  -c, --ctx N\n        context\n", help.String())
	require.Panics(t, func() { Alias(flag.NewFlagSet("y", flag.ContinueOnError), "a", "b") })
}

// TestParseErrors: each error of the flag package becomes one line in the docs' spelling.
func TestParseErrors(t *testing.T) {
	fs := NewFlags("x", io.Discard)
	fs.Int("n", 1, "count")
	fs.String("prompt-file", "", "file")
	for args, want := range map[string]string{
		"--prompt-fiel": "unknown flag --prompt-fiel (did you mean --prompt-file?); kvref x --help lists the flags",
		"-n":            "-n needs a value; kvref x --help lists the flags",
		"-n=x":          `invalid value "x" for -n: parse error; kvref x --help lists the flags`,
	} {
		err := Parse(fs, strings.Fields(args))
		var ue UsageError
		require.ErrorAs(t, err, &ue, args)
		require.Equal(t, want, ue.Msg, args)
	}
	require.ErrorIs(t, Parse(fs, []string{"-h"}), flag.ErrHelp)
}
