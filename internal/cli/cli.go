// Package cli is the flag machinery of the kvref command: flag sets whose help lists each
// flag once with its aliases, by group, in the docs' spelling; one-line flag errors that
// name the flag and suggest the nearest one; the build's version; a final newline on a
// terminal.
//
// A flag is one line, fs.TypeVar(&p, "name", def, "help"); an alias is one more,
// Alias(fs, "ctk", "cache-type-k"); flags that several commands share are registered
// inside Group(fs, "TITLE", ...) so that the help lists them under that title.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
)

// NewFlags returns a flag set that reports errors instead of exiting. Its usage (-h)
// prints the lines of usage, then the flags by group; a command that shows more sets
// fs.Usage itself and calls PrintFlags.
func NewFlags(name string, stderr io.Writer, usage ...string) *flag.FlagSet {
	fs := flag.NewFlagSet("kvref "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		for _, line := range usage {
			fmt.Fprintln(stderr, line)
		}
		PrintFlags(fs, stderr)
	}
	return fs
}

// flagGroup is a titled group of a flag set's flags in its help.
type flagGroup struct {
	title string
	names map[string]bool
}

// groups holds each flag set's groups (a flag set is registered by one goroutine, but
// commands may run concurrently in tests).
var groups sync.Map // *flag.FlagSet → *[]flagGroup

// Group runs register and files the flags it adds to fs under title in fs's help. Groups
// may nest: a flag belongs to the innermost.
func Group(fs *flag.FlagSet, title string, register func()) {
	before := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { before[f.Name] = true })
	register()
	g := flagGroup{title: title, names: map[string]bool{}}
	fs.VisitAll(func(f *flag.Flag) {
		if !before[f.Name] {
			g.names[f.Name] = true
		}
	})
	v, _ := groups.LoadOrStore(fs, new([]flagGroup))
	p := v.(*[]flagGroup)
	*p = append(*p, g)
}

// Alias registers name as another spelling of the flag of, which must exist.
func Alias(fs *flag.FlagSet, name, of string) {
	f := fs.Lookup(of)
	if f == nil {
		panic("kvref: alias " + name + " of undefined flag " + of)
	}
	fs.Var(f.Value, name, "")
}

// shortNames are the names of more than one letter spelled with one dash, as llama.cpp
// spells them.
var shortNames = map[string]bool{"np": true, "ctk": true, "ctv": true}

// DashName spells a flag as the docs do: -x for one letter and llama.cpp's short names,
// --name otherwise (the flag package takes either).
func DashName(name string) string {
	if len(name) == 1 || shortNames[name] {
		return "-" + name
	}
	return "--" + name
}

// helpEntry is one flag in the help: its name, its aliases, and the flag itself.
type helpEntry struct {
	flag    *flag.Flag
	aliases []string
}

// valueKey identifies a flag's value, so that aliases (which share it) are listed once.
func valueKey(v flag.Value) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		return [2]any{rv.Type(), rv.Pointer()}
	}
	return new(int) // never equal to another
}

// helpEntries lists fs's flags once each, the primary spelling (the one with help text)
// with its aliases, in name order.
func helpEntries(fs *flag.FlagSet) []*helpEntry {
	byValue := map[any]*helpEntry{}
	var all []*helpEntry
	var aliases []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if f.Usage == "" {
			aliases = append(aliases, f)
			return
		}
		e := &helpEntry{flag: f}
		byValue[valueKey(f.Value)] = e
		all = append(all, e)
	})
	for _, a := range aliases {
		if e := byValue[valueKey(a.Value)]; e != nil {
			e.aliases = append(e.aliases, a.Name)
		} else {
			all = append(all, &helpEntry{flag: a})
		}
	}
	return all
}

// groupedEntries returns fs's help entries by group: the command's own flags first (title
// "flags"), then each group in the order registered.
func groupedEntries(fs *flag.FlagSet) (titles []string, entries [][]*helpEntry) {
	var gs []flagGroup
	if v, ok := groups.Load(fs); ok {
		gs = *v.(*[]flagGroup)
	}
	titles = []string{"flags"}
	for _, g := range gs {
		if !slices.Contains(titles, g.title) {
			titles = append(titles, g.title)
		}
	}
	entries = make([][]*helpEntry, len(titles))
	for _, e := range helpEntries(fs) {
		i := 0
		for _, g := range gs {
			if g.names[e.flag.Name] {
				i = slices.Index(titles, g.title)
				break
			}
		}
		entries[i] = append(entries[i], e)
	}
	return titles, entries
}

// flagSyntax is how a flag is written in the help: its spellings and its value's
// placeholder, "-c, --ctx N".
func flagSyntax(e *helpEntry) string {
	names := []string{DashName(e.flag.Name)}
	for _, a := range e.aliases {
		names = append(names, DashName(a))
	}
	s := strings.Join(names, ", ")
	if v := placeholder(e.flag); v != "" {
		s += " " + v
	}
	return s
}

// placeholder names a flag's value: a `NAME` in back quotes in its help, else by its type
// (none for a boolean).
func placeholder(f *flag.Flag) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return ""
	}
	name, _ := flag.UnquoteUsage(f)
	switch name {
	case "int", "uint":
		return "N"
	case "float":
		return "X"
	case "duration":
		return "D"
	case "string", "value", "":
		return stringPlaceholder(f.Name)
	}
	return name
}

// stringPlaceholder names the value of a string flag by its name.
func stringPlaceholder(name string) string {
	switch {
	case name == "m" || name == "model":
		return "MODEL"
	case name == "p":
		return "PROMPT"
	case name == "tokenizer" || strings.Contains(name, "file") || strings.HasSuffix(name, "script") || strings.HasSuffix(name, "profile") || strings.HasSuffix(name, "template"):
		return "FILE"
	case strings.Contains(name, "type"):
		return "TYPE"
	}
	return "VALUE"
}

// flagHelp is a flag's help text with its default.
func flagHelp(f *flag.Flag) string {
	_, usage := flag.UnquoteUsage(f)
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
	default:
		usage += fmt.Sprintf(" (default %s)", f.DefValue)
	}
	return usage
}

// PrintFlags writes fs's flags by group, each once with its aliases.
func PrintFlags(fs *flag.FlagSet, w io.Writer) {
	titles, entries := groupedEntries(fs)
	for i, title := range titles {
		if len(entries[i]) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", title)
		for _, e := range entries[i] {
			fmt.Fprintf(w, "  %s\n        %s\n", flagSyntax(e), flagHelp(e.flag))
		}
	}
}

// UsageError is a command-line error: Main prints it on one line and exits with status 2.
type UsageError struct{ Msg string }

func (e UsageError) Error() string { return e.Msg }

// ErrUsage marks a usage error whose usage has already been printed: Main only exits 2.
var ErrUsage = errors.New("usage error")

// Parse parses flags. -h or --help prints the help and returns flag.ErrHelp; a flag error
// is a UsageError of one line naming the flag, with the nearest flag when one is near, and
// pointing to --help.
func Parse(fs *flag.FlagSet, args []string) error {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return err
	}
	return UsageError{flagError(fs, err) + "; " + fs.Name() + " --help lists the flags"}
}

// flagError rewrites an error of the flag package in the docs' spelling, suggesting a flag
// for an unknown one.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		name = strings.TrimPrefix(name, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		s := "unknown flag " + DashName(name)
		if near := Nearest(name, names); near != "" {
			s += " (did you mean " + DashName(near) + "?)"
		}
		return s
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		name = strings.TrimPrefix(name, "-")
		return DashName(name) + " needs a value"
	}
	// invalid value "x" for flag -name: why
	if i := strings.Index(msg, " for flag -"); i >= 0 {
		rest := msg[i+len(" for flag -"):]
		name, why, _ := strings.Cut(rest, ": ")
		return msg[:i] + " for " + DashName(name) + ": " + why
	}
	return msg
}

// Nearest returns the candidate nearest to s when it is near enough to be a typo, else "":
// an edit distance of at most max(2, len(s)/3), or one of them a prefix of the other (of
// at least three letters), which counts as 1.
func Nearest(s string, candidates []string) string {
	best, bestD := "", max(2, len(s)/3)+1
	for _, c := range candidates {
		d := editDistance(s, c)
		if (strings.HasPrefix(c, s) && len(s) >= 3) || (strings.HasPrefix(s, c) && len(c) >= 3) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Damerau-Levenshtein distance (adjacent swaps count one) between a
// and b.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// Version describes this build: the module's version, the commit it was built from (and
// whether the tree had changes), and the Go toolchain.
func Version() string {
	v, rev, modified := "(devel)", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	out := "kvref " + v
	if rev != "" {
		out += " " + rev[:min(12, len(rev))]
		if modified {
			out += "+modified"
		}
	}
	return out + " " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
}

// NewlineWriter remembers whether the last byte written was a newline, so that Finish can
// end the output on a line of its own (the shell's prompt then starts a line).
type NewlineWriter struct {
	W    io.Writer
	mu   sync.Mutex
	last byte
}

func (l *NewlineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(p) > 0 {
		l.last = p[len(p)-1]
	}
	return l.W.Write(p)
}

// Finish writes a newline when something was written without one at its end.
func (l *NewlineWriter) Finish() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last != 0 && l.last != '\n' {
		l.W.Write([]byte{'\n'})
	}
}

// ParseFlagsOnly parses flags, as Parse, and refuses positional arguments; a hint, when not
// empty, follows the error in brackets.
func ParseFlagsOnly(fs *flag.FlagSet, args []string, hint string) error {
	if err := Parse(fs, args); err != nil {
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

// ParseOneArg parses flags, as Parse, and requires exactly one positional argument (which
// may be followed by nothing): without it the usage is printed and the error is ErrUsage.
func ParseOneArg(fs *flag.FlagSet, args []string) error {
	if err := Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return ErrUsage
	}
	return nil
}

// ParseInterspersed parses flags that may come before, between or after the positional
// arguments, and returns the positional ones.
func ParseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := Parse(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
