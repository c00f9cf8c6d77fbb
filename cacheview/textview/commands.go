package textview

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kvref/kvref/stepper"
)

// Help lists the commands Exec runs, as kvref step spells them (stepper.Commands); the
// help command prints it.
var Help = stepper.Help()

// ErrQuit is what Exec returns for quit (q, exit): the front end ends the session.
var ErrQuit = errors.New("quit")

// NoTokenError is pick's error for a text that is no token of the vocabulary.
type NoTokenError = stepper.NoTokenError

// Exec runs one command line of Help (spaces around it trimmed; an empty line is Enter,
// n 1), parsed by the stepper's command table (stepper.Session.ParseLine). A malformed
// line is refused with an error that says what the command takes and changes nothing; an
// error from the session is returned as it is (Console).
func (c *Console) Exec(line string) error {
	cmd, err := c.Session.ParseLine(line, c.curID())
	if err != nil {
		return err
	}
	switch cmd.Op {
	case "switch":
		c.Cur = c.Session.Seq(cmd.Seq)
		c.Switched(c.Cur)
		return nil
	case "seqs":
		c.Sequences(c.Cur)
		return nil
	case "blocks":
		c.Blocks()
		return nil
	case "top":
		c.Top = cmd.N
		c.Say("top     %d alternatives per token from now on", cmd.N)
		return nil
	case "help":
		c.Say("commands (Enter = n 1):\n%s", strings.TrimRight(Help, "\n"))
		return nil
	case "quit":
		return ErrQuit
	case "free":
		if c.Cur != nil && cmd.Seq == c.Cur.ID() {
			return fmt.Errorf("seq %d is the current sequence; switch to another one first (seqs lists them)", cmd.Seq)
		}
	}
	return c.run(cmd, strings.TrimSpace(line))
}
