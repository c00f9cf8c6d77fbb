// Command kvref is a CPU reference inference engine for Llama-family models whose product
// is the KV cache. Run `kvref help` for the commands.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/kvref/kvref/internal/cli"
	"github.com/kvref/kvref/internal/term"
)

// command is one subcommand of kvref.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// registry holds every command; each command's file registers itself in init.
var registry []command

func register(c command) { registry = append(registry, c) }

// commands returns the registered commands sorted by name.
func commands() []command {
	out := slices.Clone(registry)
	slices.SortFunc(out, func(a, b command) int { return strings.Compare(a.name, b.name) })
	return out
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "kvref: a CPU reference inference engine whose product is the KV cache")
	fmt.Fprintln(w, "\nusage: kvref COMMAND [flags]   (kvref help COMMAND, or kvref COMMAND --help, for its flags)")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "  %-9s %s\n", "help", "this list, or kvref help COMMAND: a command's flags")
	fmt.Fprintf(w, "  %-9s %s\n", "version", "the version of kvref, its commit and the Go that built it")
}

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Main runs kvref with the given arguments and returns the exit status. On a terminal,
// output that does not end with a newline gets one, so the shell's prompt starts a line.
func Main(args []string, stdout, stderr io.Writer) int {
	if term.IsTerminal(stdout) {
		nw := &cli.NewlineWriter{W: stdout}
		defer nw.Finish()
		stdout = nw
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	name, args := args[0], args[1:]
	switch name {
	case "help":
		if len(args) == 0 {
			usage(stdout)
			return 0
		}
		name, args = args[0], []string{"--help"}
		if _, ok := lookup(name); ok {
			stderr = stdout // the help was asked for: it is the output
		}
	case "version", "--version":
		fmt.Fprintln(stdout, cli.Version())
		return 0
	}
	c, ok := lookup(name)
	if !ok {
		var names []string
		for _, c := range commands() {
			names = append(names, c.name)
		}
		msg := fmt.Sprintf("kvref: unknown command %q", name)
		if near := cli.Nearest(name, append(names, "help", "version")); near != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", near)
		}
		fmt.Fprintln(stderr, msg+"; kvref help lists the commands")
		return 2
	}
	err := c.run(args, stdout, stderr)
	var ue cli.UsageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "kvref %s: %s\n", c.name, ue.Msg)
		return 2
	}
	// One prefix: errors of a package that names itself the way the command is named
	// ("plan: ...") do not repeat the name.
	msg := strings.TrimPrefix(err.Error(), c.name+": ")
	fmt.Fprintf(stderr, "kvref %s: %s\n", c.name, msg)
	var ec *exitCodeError
	if errors.As(err, &ec) {
		return ec.code
	}
	return 1
}

// lookup returns the command of that name.
func lookup(name string) (command, bool) {
	for _, c := range registry {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// The flag machinery is internal/cli's; these are its names in the commands.

func newFlags(name string, stderr io.Writer, usage ...string) *flag.FlagSet {
	return cli.NewFlags(name, stderr, usage...)
}
func parse(fs *flag.FlagSet, args []string) error           { return cli.Parse(fs, args) }
func group(fs *flag.FlagSet, title string, register func()) { cli.Group(fs, title, register) }
func alias(fs *flag.FlagSet, name, of string)               { cli.Alias(fs, name, of) }
func printFlags(fs *flag.FlagSet, w io.Writer)              { cli.PrintFlags(fs, w) }
func parseOneArg(fs *flag.FlagSet, args []string) error     { return cli.ParseOneArg(fs, args) }
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	return cli.ParseInterspersed(fs, args)
}
func parseFlagsOnly(fs *flag.FlagSet, args []string, hint string) error {
	return cli.ParseFlagsOnly(fs, args, hint)
}

var errUsage = cli.ErrUsage

// printJSON writes v as one line of JSON.
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// exitCodeError is an error whose command exits with its own status (printed as usual).
type exitCodeError struct {
	code int
	err  error
}

func (e *exitCodeError) Error() string { return e.err.Error() }
func (e *exitCodeError) Unwrap() error { return e.err }
