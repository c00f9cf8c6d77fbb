package textview

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// newConsole starts a console on stories260K (blocks of 4 slots, 8 of them) with the
// prompt "hello" and returns it with what it printed.
func newConsole(t *testing.T) (*Console, *strings.Builder) {
	t.Helper()
	var out strings.Builder
	c := &Console{View: *newView(t, &out, 4, 8, false)}
	require.NoError(t, c.Add("hello"))
	return c, &out
}

// last is the last token of the current sequence.
func last(c *Console) int { toks := c.Cur.KV.Tokens(); return toks[len(toks)-1] }

// TestExecRunsCommands: each command line does what Help says: Enter and n decode, pick
// forces a token by id or by its quoted text, add takes a quoted prompt with its spaces,
// fork/switch/free move between sequences, and quit ends the session.
func TestExecRunsCommands(t *testing.T) {
	c, out := newConsole(t)
	tok := c.model().Tokenizer
	n := c.Cur.KV.Len()
	require.NoError(t, c.Exec(""))
	require.NoError(t, c.Exec("  n 3  "))
	require.NoError(t, c.Exec("next"))
	require.Equal(t, n+5, c.Cur.KV.Len(), "Enter, n 3 and next decode 5 tokens")

	require.NoError(t, c.Exec("pick 65"))
	require.Equal(t, 65, last(c))
	spaced := -1 // a token whose text begins with a space: pick needs the quotes for it
	for id := range tok.VocabSize() {
		if p := tok.Piece(id); len(p) > 1 && p[0] == ' ' {
			spaced = id
			break
		}
	}
	require.GreaterOrEqual(t, spaced, 0, "stories260K has tokens that begin with a space")
	require.NoError(t, c.Exec("pick "+strconv.Quote(string(tok.Piece(spaced)))))
	require.Equal(t, spaced, last(c))

	first := c.Cur
	require.NoError(t, c.Exec(`add " upon a time"`))
	require.Contains(t, out.String(), `prompt " upon a time"`, "the quotes keep the leading space")
	require.Contains(t, out.String(), "Enter decodes the next token of seq 1; help lists the commands.")
	require.NoError(t, c.Exec("fork"))
	require.Len(t, c.Session.Live(), 3)
	require.NoError(t, c.Exec("switch 0"))
	require.Same(t, first, c.Cur)
	require.NoError(t, c.Exec("free 2"))
	require.Len(t, c.Session.Live(), 2)

	out.Reset()
	require.NoError(t, c.Exec("help"))
	require.Equal(t, "  commands (Enter = n 1):\n"+Help, out.String())
	for _, q := range []string{"quit", "q", "exit"} {
		require.ErrorIs(t, c.Exec(q), ErrQuit)
	}
	require.NoError(t, c.Session.Engine().Pool().Check())
}

// TestExecRefusesBadArguments: a malformed command line is refused with an error saying
// what the command takes, and the session, the pool and the current sequence stay as
// they were.
func TestExecRefusesBadArguments(t *testing.T) {
	t.Parallel()

	c, _ := newConsole(t)
	require.NoError(t, c.Exec("fork")) // seq 1, current; seq 0 lives
	vocab := c.model().Tokenizer.VocabSize()
	cfg := c.model().Config
	for _, tc := range []struct{ line, want string }{
		{"bogus", `unknown command "bogus" (help lists the commands)`},
		{"n 0", `n takes a number of tokens ≥ 1, got "0"`},
		{"n -2", `n takes a number of tokens ≥ 1, got "-2"`},
		{"n x", `n takes a number of tokens ≥ 1, got "x"`},
		{"n 1 2", `n takes at most one number, the tokens to decode, got "1 2"`},
		{"pick", "pick takes a token id from 0 to " + strconv.Itoa(vocab-1) + " or a token's text in quotes"},
		{"pick -1", `got "-1"`},
		{"pick " + strconv.Itoa(vocab), "pick takes a token id from 0 to " + strconv.Itoa(vocab-1)},
		{`pick "\q"`, `pick: "\q" is not a valid quoted string`},
		{`pick "no such token"`, `pick: no token is the text "no such token"`},
		{"fork 1", `fork takes no arguments, got "1"`},
		{"switch", `switch takes a sequence number, got ""`},
		{"switch 7", `no sequence "7"; the live ones are 0, 1 (seqs lists them)`},
		{"switch x", `no sequence "x"`},
		{"free 1", "seq 1 is the current sequence; switch to another one first"},
		{"free 0 1", "free takes a sequence number"},
		{`add "bad \q"`, `add: "bad \q" is not a valid quoted string`},
		{"seqs all", `seqs takes no arguments, got "all"`},
		{"blocks 1", `blocks takes no arguments, got "1"`},
		{"top", "top takes a number of alternatives"},
		{"top -1", "top takes a number from 0 to " + strconv.Itoa(vocab) + `, got "-1"`},
		{"top " + strconv.Itoa(vocab+1), "top takes a number from 0 to"},
		{"temp", "temp takes a temperature"},
		{"temp -1", `temp takes a number ≥ 0 (0: greedy), got "-1"`},
		{"temp Inf", "temp takes a number ≥ 0"},
		{"temp NaN", "temp takes a number ≥ 0"},
		{"attn", "attn takes LAYER, LAYER:HEAD or off"},
		{"undo 1", `undo takes no arguments, got "1"`},
		{"seed", "seed takes a seed"},
		{"seed -3", `seed takes a whole number ≥ 0, got "-3"`},
		{"attn " + strconv.Itoa(cfg.Layers), "attn: want LAYER or LAYER:HEAD with a layer from 0 to " + strconv.Itoa(cfg.Layers-1)},
		{"attn 0:" + strconv.Itoa(cfg.Heads), "attn: want a head from 0 to " + strconv.Itoa(cfg.Heads-1)},
	} {
		t.Run(tc.line, func(t *testing.T) {
			pool := c.Session.Engine().Pool()
			before, cur, n, live := pool.Stats(), c.Cur, c.Cur.KV.Len(), len(c.Session.Live())
			require.ErrorContains(t, c.Exec(tc.line), tc.want)
			require.Equal(t, before, pool.Stats())
			require.Same(t, cur, c.Cur)
			require.Equal(t, n, c.Cur.KV.Len())
			require.Len(t, c.Session.Live(), live)
		})
	}
}

// TestExecNoTokenError: pick's unknown text is a NoTokenError naming the text, so that a
// front end can add its own hint.
func TestExecNoTokenError(t *testing.T) {
	t.Parallel()

	c, _ := newConsole(t)
	var nt NoTokenError
	require.True(t, errors.As(c.Exec(`pick "zzzz qqqq"`), &nt))
	require.Equal(t, "zzzz qqqq", nt.Text)
	require.True(t, errors.As(c.Exec("pick x  y"), &nt))
	require.Equal(t, "x  y", nt.Text, "an unquoted text is looked up as it is, inner spaces kept")
}
