// Command kvref is a CPU reference inference engine for Llama-family models whose product
// is the KV cache. Run `kvref help` for the commands.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// command is one subcommand of kvref.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"run", "generate text from a prompt through the paged KV cache", runCmd},
		{"tokenize", "print the token ids of a text", tokenizeCmd},
		{"synth", "write a deterministic random model as a GGUF file", synthCmd},
	}
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
			return 1
		}
	}
	fmt.Fprintf(stderr, "kvref: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// errUsage marks a flag error already printed by the flag package.
var errUsage = errors.New("usage error")

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("kvref "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
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
