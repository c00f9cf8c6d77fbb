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
	fmt.Fprintln(w, "\nusage: kvref COMMAND [flags]   (kvref COMMAND -h for its flags)")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
}

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// Main runs kvref with the given arguments and returns the exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(args[1:], stdout, stderr)
			switch {
			case err == nil:
				return 0
			case errors.Is(err, flag.ErrHelp):
				return 0
			case errors.Is(err, errUsage):
				return 2
			}
			fmt.Fprintf(stderr, "kvref %s: %v\n", c.name, err)
			var ec *exitCodeError
			if errors.As(err, &ec) {
				return ec.code
			}
			return 1
		}
	}
	fmt.Fprintf(stderr, "kvref: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// errUsage marks a flag error already printed by the flag package.
var errUsage = errors.New("usage error")

// exitCodeError is an error whose command exits with its own status (printed as usual).
type exitCodeError struct {
	code int
	err  error
}

func (e *exitCodeError) Error() string { return e.err.Error() }
func (e *exitCodeError) Unwrap() error { return e.err }

// newFlags returns a flag set that reports errors instead of exiting. Its usage (-h, or a
// flag error) prints the lines of usage, then the flags; a command that shows more sets
// fs.Usage itself.
func newFlags(name string, stderr io.Writer, usage ...string) *flag.FlagSet {
	fs := flag.NewFlagSet("kvref "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		for _, line := range usage {
			fmt.Fprintln(stderr, line)
		}
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags, mapping flag errors to errUsage.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}

// parseFlagsOnly parses flags, as parse, and refuses positional arguments; a hint, when not
// empty, follows the error in brackets.
func parseFlagsOnly(fs *flag.FlagSet, args []string, hint string) error {
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return nil
	}
	if hint != "" {
		return fmt.Errorf("unexpected arguments %q (%s)", fs.Args(), hint)
	}
	return fmt.Errorf("unexpected arguments %q", fs.Args())
}

// parseOneArg parses flags, as parse, and requires exactly one positional argument (which
// may be followed by nothing): without it the usage is printed and the error is errUsage.
func parseOneArg(fs *flag.FlagSet, args []string) error {
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	return nil
}

// printJSON writes v as one line of JSON.
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}
