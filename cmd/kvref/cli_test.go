package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/cli"
	"github.com/kvref/kvref/internal/testutil"
)

// TestUnknownFlagIsOneLineWithASuggestion: a mistyped flag gives one line naming it, the
// nearest flag and --help, and exit status 2; nothing on stdout.
func TestUnknownFlagIsOneLineWithASuggestion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--temprature", "0"}, "kvref run: unknown flag --temprature (did you mean --temp?); kvref run --help lists the flags\n"},
		{[]string{"run", "-top_k", "3"}, "kvref run: unknown flag --top_k (did you mean --top-k?); kvref run --help lists the flags\n"},
		{[]string{"plan", "--presetz", "x"}, "kvref plan: unknown flag --presetz (did you mean --preset?); kvref plan --help lists the flags\n"},
		{[]string{"run", "--zzzzzz"}, "kvref run: unknown flag --zzzzzz; kvref run --help lists the flags\n"},
		{[]string{"run", "-n"}, "kvref run: -n needs a value; kvref run --help lists the flags\n"},
		{[]string{"run", "-n", "many"}, `kvref run: invalid value "many" for -n: parse error; kvref run --help lists the flags` + "\n"},
	} {
		out, stderr, code := kvref(t, c.args...)
		require.Equal(t, 2, code, "%v", c.args)
		require.Empty(t, out, "%v", c.args)
		require.Equal(t, c.want, stderr, "%v", c.args)
	}
}

// TestUnknownCommandSuggests: a mistyped command names the nearest one.
func TestUnknownCommandSuggests(t *testing.T) {
	_, stderr, code := kvref(t, "rnu")
	require.Equal(t, 2, code)
	require.Equal(t, "kvref: unknown command \"rnu\" (did you mean run?); kvref help lists the commands\n", stderr)
	_, stderr, code = kvref(t, "versoin")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "(did you mean version?)")
	_, stderr, code = kvref(t, "help", "tokenise")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "(did you mean tokenize?)")
}

// TestHelpCommand: kvref help CMD prints CMD's help on stdout, and it is what CMD --help
// prints; kvref help lists help and version with the commands.
func TestHelpCommand(t *testing.T) {
	out, stderr, code := kvref(t, "help", "run")
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	require.Contains(t, out, "usage: kvref run")
	_, help, code := kvref(t, "run", "--help")
	require.Equal(t, 0, code)
	require.Equal(t, help, out)

	out, _, code = kvref(t, "help")
	require.Equal(t, 0, code)
	for _, c := range append(commands(), command{name: "help"}, command{name: "version"}) {
		require.Regexp(t, "(?m)^  "+regexp.QuoteMeta(c.name)+" ", out)
	}
}

// TestHelpListsEachFlagOnceInGroups: every command's help lists each flag exactly once
// (aliases on the same line, in the docs' spelling), and the shared flags under their
// group's title.
func TestHelpListsEachFlagOnceInGroups(t *testing.T) {
	entry := regexp.MustCompile(`(?m)^  (-[^ ,\n]+(?:, -[^ ,\n]+)*)`)
	for _, c := range commands() {
		out, _, code := kvref(t, "help", c.name)
		require.Equal(t, 0, code, c.name)
		seen := map[string]bool{}
		for _, m := range entry.FindAllStringSubmatch(out, -1) {
			for _, name := range strings.Split(m[1], ", ") {
				bare := strings.TrimLeft(name, "-")
				require.False(t, seen[bare], "%s: %s listed twice", c.name, name)
				seen[bare] = true
				require.Equal(t, cli.DashName(bare), name, "%s: the docs' spelling of %s", c.name, bare)
			}
		}
		require.NotEmpty(t, seen, c.name)
	}
	out, _, _ := kvref(t, "help", "run")
	require.Contains(t, out, "\n  -c, --ctx N\n")
	require.Contains(t, out, "\nsampling flags:\n  --min-p X\n")
	require.Contains(t, out, "\nmodel flags:\n  -m MODEL\n")
	require.Less(t, strings.Index(out, "\nflags:\n"), strings.Index(out, "\nmodel flags:\n"), "the command's own flags first")
}

// TestVersion prints one line naming kvref and the Go that built it.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		out, _, code := kvref(t, arg)
		require.Equal(t, 0, code)
		require.Regexp(t, `^kvref \S+ .*go1\.\d+.* \w+/\w+\n$`, out)
	}
}

// TestOneErrorPrefix: an error of a package that names itself as the command does is not
// prefixed twice.
func TestOneErrorPrefix(t *testing.T) {
	_, stderr, code := kvref(t, "plan", "--preset", "nope")
	require.Equal(t, 1, code)
	require.True(t, strings.HasPrefix(stderr, `kvref plan: unknown preset "nope"`), stderr)
	_, stderr, code = kvref(t, "plan", "--preset", "llama-3-8b", "--block-size", "0")
	require.Equal(t, 1, code)
	require.Equal(t, "kvref plan: block size must be in [1, 16777216] tokens, got 0\n", stderr, "internal/plan's error says plan: first")
}

// TestBuiltinNoticeOnlyWhereTextIsGenerated: tokenize and inspect of the built-in model say
// nothing about it; run does.
func TestBuiltinNoticeOnlyWhereTextIsGenerated(t *testing.T) {
	_, stderr, code := kvref(t, "tokenize", "Once")
	require.Equal(t, 0, code)
	require.Empty(t, stderr)
	_, stderr, code = kvref(t, "inspect", "builtin:stories260K")
	require.Equal(t, 0, code)
	require.Empty(t, stderr)
	_, stderr, code = kvref(t, "run", "-n", "1", "-m", "builtin:stories260K")
	require.Equal(t, 0, code)
	require.Contains(t, stderr, "using the built-in stories260K")
}

// TestCLIReference: docs/cli.md is what the flag sets say (go generate ./cmd/kvref, or
// this test with -update, rewrites it).
func TestCLIReference(t *testing.T) {
	path := filepath.Join(testutil.ModuleRoot(t), "docs", "cli.md")
	want := cliReference()
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want, string(got), "docs/cli.md is stale: run go generate ./cmd/kvref")
	for _, c := range commands() {
		require.Contains(t, want, "\n## kvref "+c.name+"\n")
		require.Contains(t, want, "usage: kvref "+c.name, "the help of %s starts with its usage", c.name)
	}
}
