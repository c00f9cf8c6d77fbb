package textview

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/tokenizer"
)

// Help lists the commands Exec runs, as kvref step spells them; the help command prints it.
const Help = `  Enter, n [K]    decode the next K tokens (default 1) of the current sequence
  pick ID|"TEXT"  decode this token instead of sampling one: an id, or its text as shown
  fork            start a sibling of the current sequence that shares all its blocks, and switch to it
  switch N        make sequence N the current one
  free N          end sequence N (not the current one): its blocks lose a reference
  add TEXT        start a sequence from a new prompt, reusing cached blocks of its prefix; switch to it
  seqs            list the live sequences
  blocks          show the pool as a grid: free, in use, shared (with refcount), cached
  top K           show K alternatives for each token
  temp T          sampling temperature of every sequence (0: greedy)
  attn L[:H]|off  show each new token's attention in layer L (head H, or the mean over heads)
  help            this list
  quit            leave (so does the end of the input)
`

// ErrQuit is what Exec returns for quit (q, exit): the front end ends the session.
var ErrQuit = errors.New("quit")

// NoTokenError is pick's error for a text that is no token of the vocabulary.
type NoTokenError struct{ Text string }

func (e NoTokenError) Error() string { return fmt.Sprintf("no token is the text %q", e.Text) }

// Exec runs one command line of Help (spaces around it trimmed; an empty line is Enter,
// n 1). A malformed line is refused with an error that says what the command takes and
// changes nothing; an error from the session is returned as it is (Console).
func (c *Console) Exec(line string) error {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return c.Next(1)
	}
	cmd, args := fields[0], fields[1:]
	want := func(n int, what string) error {
		if len(args) != n {
			return fmt.Errorf("%s takes %s, got %q (help lists the commands)", cmd, what, strings.Join(args, " "))
		}
		return nil
	}
	switch cmd {
	case "n", "next":
		if len(args) > 1 {
			return want(1, "at most one number, the tokens to decode")
		}
		k := 1
		if len(args) == 1 {
			var err error
			if k, err = strconv.Atoi(args[0]); err != nil || k < 1 {
				return fmt.Errorf("n takes a number of tokens ≥ 1, got %q", args[0])
			}
		}
		return c.Next(k)
	case "pick":
		id, err := c.pickArg(restOf(line))
		if err != nil {
			return err
		}
		return c.Decode(id)
	case "fork":
		if err := want(0, "no arguments"); err != nil {
			return err
		}
		c.Fork()
		return nil
	case "switch", "free":
		if err := want(1, "a sequence number"); err != nil {
			return err
		}
		q, err := c.lookup(args[0])
		if err != nil {
			return err
		}
		if cmd == "switch" {
			c.Switch(q)
			return nil
		}
		return c.Free(q)
	case "add":
		text, err := unquote(restOf(line))
		if err != nil {
			return fmt.Errorf("add: %w", err)
		}
		return c.Add(text)
	case "seqs", "blocks":
		if err := want(0, "no arguments"); err != nil {
			return err
		}
		if cmd == "seqs" {
			c.Sequences(c.Cur)
		} else {
			c.Blocks()
		}
		return nil
	case "top":
		if err := want(1, "a number of alternatives"); err != nil {
			return err
		}
		k, err := strconv.Atoi(args[0])
		if vocab := c.model().Tokenizer.VocabSize(); err != nil || k < 0 || k > vocab {
			return fmt.Errorf("top takes a number from 0 to %d, got %q", vocab, args[0])
		}
		c.SetTop(k)
		return nil
	case "temp":
		if err := want(1, "a temperature"); err != nil {
			return err
		}
		t, err := strconv.ParseFloat(args[0], 64)
		if err != nil || t < 0 || math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Errorf("temp takes a number ≥ 0 (0: greedy), got %q", args[0])
		}
		c.SetTemperature(t)
		return nil
	case "attn":
		if err := want(1, "LAYER, LAYER:HEAD or off"); err != nil {
			return err
		}
		cfg := c.model().Config
		a, err := engine.ParseAttention(args[0], cfg.Layers, cfg.Heads)
		if err != nil {
			return fmt.Errorf("attn: %w", err)
		}
		c.SetAttention(a)
		return nil
	case "help", "?":
		c.Say("commands (Enter = n 1):\n%s", strings.TrimRight(Help, "\n"))
		return nil
	case "quit", "q", "exit":
		return ErrQuit
	}
	return fmt.Errorf("unknown command %q (help lists the commands)", cmd)
}

// lookup finds a live sequence by the number the user typed.
func (c *Console) lookup(arg string) (*engine.SessionSeq, error) {
	id, err := strconv.Atoi(arg)
	if q := c.Session.Seq(id); err == nil && q != nil {
		return q, nil
	}
	var ids []string
	for _, q := range c.Session.Live() {
		ids = append(ids, strconv.Itoa(q.ID()))
	}
	return nil, fmt.Errorf("no sequence %q; the live ones are %s (seqs lists them)", arg, strings.Join(ids, ", "))
}

// pickArg reads the argument of pick: a token id, or a token's text in double quotes as
// the display shows it (" big", "\n"), or a vocabulary entry such as </s>. A text that is
// no token is a NoTokenError.
func (c *Console) pickArg(arg string) (int, error) {
	tok := c.model().Tokenizer
	vocab := tok.VocabSize()
	usage := fmt.Errorf("pick takes a token id from 0 to %d or a token's text in quotes, as shown (pick 410, pick \" big\"), got %q", vocab-1, arg)
	if arg == "" {
		return 0, usage
	}
	if id, err := strconv.Atoi(arg); err == nil {
		if id < 0 || id >= vocab {
			return 0, usage
		}
		return id, nil
	}
	text, err := unquote(arg)
	if err != nil {
		return 0, fmt.Errorf("pick: %w", err)
	}
	if id, ok := tokenizer.Lookup(tok, text); ok {
		return id, nil
	}
	return 0, fmt.Errorf("pick: %w", NoTokenError{text})
}

// restOf returns a command line without its first word, spaces trimmed.
func restOf(line string) string {
	line = strings.TrimSpace(line)
	if i := strings.IndexAny(line, " \t"); i >= 0 {
		return strings.TrimSpace(line[i:])
	}
	return ""
}

// unquote removes Go-style double quotes around text, if it has them, so that a text can
// begin or end with spaces (add " upon a time", pick " big"); other text is returned as it is.
func unquote(text string) (string, error) {
	if len(text) < 2 || !strings.HasPrefix(text, `"`) || !strings.HasSuffix(text, `"`) {
		return text, nil
	}
	unq, err := strconv.Unquote(text)
	if err != nil {
		return "", fmt.Errorf("%s is not a valid quoted string: %v", text, err)
	}
	return unq, nil
}
