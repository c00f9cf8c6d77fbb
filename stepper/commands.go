package stepper

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/kvref/kvref/tokenizer"
)

// Command is one stepping command: what the web page posts (POST /v1/step's body) and what
// a terminal line parses into (Session.ParseLine). Session.Do runs it.
type Command struct {
	Op          string   `json:"op"`                    // see Commands: add, decode, fork, free, temperature, seed, attention, reset, undo
	Text        string   `json:"text,omitempty"`        // add: the prompt
	Seq         int      `json:"seq"`                   // decode, fork, free (and a terminal's switch): the sequence
	N           int      `json:"n,omitempty"`           // decode: tokens (default 1); a terminal's top: alternatives
	Token       *int     `json:"token,omitempty"`       // decode: this token instead of sampling one (n must be 1)
	Top         int      `json:"top,omitempty"`         // decode: alternatives to record per token (0: the front end's default)
	Temperature *float64 `json:"temperature,omitempty"` // temperature
	Seed        *uint64  `json:"seed,omitempty"`        // seed
	Layer       *int     `json:"layer,omitempty"`       // attention: the layer (-1: off)
	Head        *int     `json:"head,omitempty"`        // attention: the head (-1: the mean over heads)
	Blocks      int      `json:"blocks,omitempty"`      // reset: blocks in the new pool (0: as before)
	BlockSize   int      `json:"block_size,omitempty"`  // reset: slots per block (0: as before)
}

// Result is what Do did: the record of the session's operation the command ran (Added,
// Decoded, Forked or Freed), or nothing more than Op for the settings, reset and undo.
type Result struct {
	Op      string
	Seq     *Seq      // the sequence the command made or acted on (nil: none, or freed)
	Added   *Added    // add
	Decoded []Decoded // decode: the steps done, in order
	Stopped error     // decode: why it stopped before its N tokens (nil: it did them all)
	Forked  *Forked   // fork (Seq is the new sequence; Forked.Seq.Parent the one forked)
	Freed   *Freed    // free
}

// Limits of the stepping commands.
const (
	MaxDecodeSteps = 512  // most tokens one decode command computes
	MaxResetBlocks = 4096 // most blocks a reset pool may have
	MaxBlockSize   = 256  // most slots per block after a reset
)

// Spec is one command of the table: how the page names it (Op), how a terminal spells it
// (Words), its line in Help, how a terminal line's arguments parse and what it does.
type Spec struct {
	Op    string   // Command.Op
	Words []string // a terminal's spellings, the name first; none: the page only
	Label string   // Help's left column: the name and its arguments
	Help  string   // Help's right column
	parse func(s *Session, l line) (Command, error)
	// run does the command; nil for a terminal's own commands (switch, seqs, blocks, top,
	// help, quit), which show the session without changing it: the front end runs them.
	run func(s *Session, cmd Command, each func(Decoded)) (Result, error)
}

// Commands is the stepper's command table, in Help's order.
var Commands = []Spec{
	{Op: "decode", Words: []string{"n", "next"}, Label: "Enter, n [K]", Help: "decode the next K tokens (default 1) of the current sequence", parse: parseNext, run: runDecode},
	{Op: "decode", Words: []string{"pick"}, Label: `pick ID|"TEXT"`, Help: "decode this token instead of sampling one: an id, or its text as shown", parse: parsePick, run: runDecode},
	{Op: "fork", Words: []string{"fork"}, Label: "fork", Help: "start a sibling of the current sequence that shares all its blocks, and switch to it", parse: parseFork, run: runFork},
	{Op: "switch", Words: []string{"switch"}, Label: "switch N", Help: "make sequence N the current one", parse: parseSeqArg},
	{Op: "free", Words: []string{"free"}, Label: "free N", Help: "end sequence N (not the current one): its blocks lose a reference", parse: parseSeqArg, run: runFree},
	{Op: "add", Words: []string{"add"}, Label: "add TEXT", Help: "start a sequence from a new prompt, reusing cached blocks of its prefix; switch to it", parse: parseAdd, run: runAdd},
	{Op: "seqs", Words: []string{"seqs"}, Label: "seqs", Help: "list the live sequences", parse: parseBare},
	{Op: "blocks", Words: []string{"blocks"}, Label: "blocks", Help: "show the pool as a grid: free, in use, shared (with refcount), cached", parse: parseBare},
	{Op: "top", Words: []string{"top"}, Label: "top K", Help: "show K alternatives for each token", parse: parseTop},
	{Op: "temperature", Words: []string{"temp"}, Label: "temp T", Help: "sampling temperature of every sequence (0: greedy)", parse: parseTemp, run: runTemperature},
	{Op: "seed", Words: []string{"seed"}, Label: "seed S", Help: "sampling seed: every sequence samples with a seed derived from S and its id", parse: parseSeed, run: runSeed},
	{Op: "attention", Words: []string{"attn"}, Label: "attn L[:H]|off", Help: "show each new token's attention in layer L (head H, or the mean over heads)", parse: parseAttn, run: runAttention},
	{Op: "reset", run: runReset},
	{Op: "undo", Words: []string{"undo"}, Label: "undo", Help: "take back the last command that changed the session (add, n, pick, fork, free, temp, seed, attn)", parse: parseBare, run: runUndo},
	{Op: "help", Words: []string{"help", "?"}, Label: "help", Help: "this list", parse: parseBare},
	{Op: "quit", Words: []string{"quit", "q", "exit"}, Label: "quit", Help: "leave (so does the end of the input)", parse: parseBare},
}

// Help lists the commands a terminal types, one per line, from the table.
func Help() string {
	var b strings.Builder
	for _, c := range Commands {
		if len(c.Words) > 0 {
			fmt.Fprintf(&b, "  %-15s %s\n", c.Label, c.Help)
		}
	}
	return b.String()
}

// Ops lists the ops Do runs, comma-separated, in the table's order.
func Ops() string {
	var ops []string
	for _, c := range Commands {
		if c.run != nil && (len(ops) == 0 || ops[len(ops)-1] != c.Op) {
			ops = append(ops, c.Op)
		}
	}
	return strings.Join(ops, ", ")
}

// Do runs one command (DoEach without a callback).
func (s *Session) Do(cmd Command) (Result, error) { return s.DoEach(cmd, nil) }

// DoEach runs one command of the table; each, when not nil, sees every decode step as it
// is done (a front end that shows the pool after each step reads it then). A malformed
// command, or one the session cannot run now, changes nothing; a decode that fails after
// some steps keeps them and says why in Result.Stopped. Everything the command changed is
// one entry of the history that Undo takes back.
func (s *Session) DoEach(cmd Command, each func(Decoded)) (Result, error) {
	var spec *Spec
	for i := range Commands {
		if Commands[i].Op == cmd.Op && Commands[i].run != nil {
			spec = &Commands[i]
			break
		}
	}
	switch {
	case cmd.Op == "":
		return Result{}, fmt.Errorf("the command has no \"op\"; ops are %s", Ops())
	case spec == nil:
		return Result{}, fmt.Errorf("unknown op %q; ops are %s", cmd.Op, Ops())
	}
	if cmd.Op != "undo" {
		s.begin()
		defer s.end()
	}
	r, err := spec.run(s, cmd, each)
	r.Op = cmd.Op
	return r, err
}

// lookup finds the live sequence a command names.
func (s *Session) lookup(id int) (*Seq, error) {
	if q := s.seqs[id]; q != nil {
		return q, nil
	}
	if len(s.seqs) == 0 {
		return nil, fmt.Errorf("no sequence %d: there are none; add a prompt first", id)
	}
	return nil, fmt.Errorf("no sequence %d; the live ones are %s", id, s.liveIDs())
}

// liveIDs lists the live sequences' ids, comma-separated.
func (s *Session) liveIDs() string {
	var ids []string
	for _, q := range s.Live() {
		ids = append(ids, strconv.Itoa(q.ID()))
	}
	return strings.Join(ids, ", ")
}

func runAdd(s *Session, cmd Command, _ func(Decoded)) (Result, error) {
	ids := s.m.Tokenizer.EncodeSpecial(cmd.Text, tokenizer.Prompt)
	if len(ids) == 0 {
		return Result{}, fmt.Errorf("the prompt %q has no tokens (this tokenizer adds no BOS); give some text", cmd.Text)
	}
	a, err := s.Add(ids)
	if err != nil {
		return Result{}, err
	}
	return Result{Seq: a.Seq, Added: &a}, nil
}

func runDecode(s *Session, cmd Command, each func(Decoded)) (Result, error) {
	q, err := s.lookup(cmd.Seq)
	if err != nil {
		return Result{}, err
	}
	n, forced := max(cmd.N, 1), -1
	switch vocab := s.m.Config.Vocab; {
	case n > MaxDecodeSteps:
		return Result{}, fmt.Errorf("decode takes at most %d tokens at once, got %d", MaxDecodeSteps, n)
	case cmd.Token != nil && n != 1:
		return Result{}, fmt.Errorf("a picked token decodes one step; n must be 1, got %d", n)
	case cmd.Token != nil && (*cmd.Token < 0 || *cmd.Token >= vocab):
		return Result{}, fmt.Errorf("token must be an id from 0 to %d, got %d", vocab-1, *cmd.Token)
	case cmd.Token != nil:
		forced = *cmd.Token
	}
	r := Result{Seq: q}
	for i := range n {
		d, err := s.Decode(q, forced, cmd.Top)
		if err != nil {
			if i == 0 {
				return Result{}, err
			}
			r.Stopped = err
			break
		}
		r.Decoded = append(r.Decoded, d)
		if each != nil {
			each(d)
		}
	}
	return r, nil
}

func runFork(s *Session, cmd Command, _ func(Decoded)) (Result, error) {
	q, err := s.lookup(cmd.Seq)
	if err != nil {
		return Result{}, err
	}
	f := s.Fork(q)
	return Result{Seq: f.Seq, Forked: &f}, nil
}

func runFree(s *Session, cmd Command, _ func(Decoded)) (Result, error) {
	q, err := s.lookup(cmd.Seq)
	if err != nil {
		return Result{}, err
	}
	f := s.Free(q)
	return Result{Freed: &f}, nil
}

func runTemperature(s *Session, cmd Command, _ func(Decoded)) (Result, error) {
	if t := cmd.Temperature; t == nil || *t < 0 || math.IsNaN(*t) || math.IsInf(*t, 0) {
		return Result{}, fmt.Errorf("temperature needs \"temperature\": a number ≥ 0 (0: greedy)")
	}
	s.SetTemperature(*cmd.Temperature)
	return Result{}, nil
}

func runSeed(s *Session, cmd Command, _ func(Decoded)) (Result, error) {
	if cmd.Seed == nil {
		return Result{}, fmt.Errorf("seed needs \"seed\": a whole number ≥ 0")
	}
	s.SetSeed(*cmd.Seed)
	return Result{}, nil
}

func runAttention(s *Session, cmd Command, _ func(Decoded)) (Result, error) {
	c := s.m.Config
	if cmd.Layer == nil {
		return Result{}, fmt.Errorf("attention needs \"layer\": 0 to %d, or -1 for off", c.Layers-1)
	}
	a := AttentionChoice{Layer: *cmd.Layer, Head: -1}
	if cmd.Head != nil {
		a.Head = *cmd.Head
	}
	switch {
	case a.Layer < -1 || a.Layer >= c.Layers:
		return Result{}, fmt.Errorf("layer must be from 0 to %d, or -1 for off, got %d", c.Layers-1, a.Layer)
	case a.Head < -1 || a.Head >= c.Heads:
		return Result{}, fmt.Errorf("head must be from 0 to %d, or -1 for the mean over heads, got %d", c.Heads-1, a.Head)
	}
	if a.Layer < 0 {
		a.Head = -1
	}
	s.SetAttention(a)
	return Result{}, nil
}

func runReset(s *Session, cmd Command, _ func(Decoded)) (Result, error) {
	cfg := s.cfg
	if cmd.Blocks != 0 {
		cfg.CacheBlocks = cmd.Blocks
	}
	if cmd.BlockSize != 0 {
		cfg.BlockSize = cmd.BlockSize
	}
	switch {
	case cfg.CacheBlocks < 0 || cfg.CacheBlocks > MaxResetBlocks:
		return Result{}, fmt.Errorf("blocks must be from 1 to %d, got %d", MaxResetBlocks, cfg.CacheBlocks)
	case cfg.BlockSize < 0 || cfg.BlockSize > MaxBlockSize:
		return Result{}, fmt.Errorf("block_size must be from 1 to %d, got %d", MaxBlockSize, cfg.BlockSize)
	}
	return Result{}, s.Reset(cfg)
}

func runUndo(s *Session, _ Command, _ func(Decoded)) (Result, error) {
	return Result{}, s.Undo()
}

// line is a terminal's command line, split for the parsers.
type line struct {
	word string   // the command as typed
	args []string // the words after it
	rest string   // the text after it, spaces trimmed
	cur  int      // the current sequence's id (-1: none)
}

// want refuses a line without exactly n arguments, saying what the command takes.
func (l line) want(n int, what string) error {
	if len(l.args) != n {
		return fmt.Errorf("%s takes %s, got %q (help lists the commands)", l.word, what, strings.Join(l.args, " "))
	}
	return nil
}

// ParseLine reads one terminal command line of Help (spaces around it trimmed; an empty
// line is Enter, n 1) into a Command; cur is the current sequence's id (-1: none), which
// decode and fork act on. A malformed line is refused with an error that says what the
// command takes. The terminal's own commands come back with their Op (switch with Seq, top
// with N; seqs, blocks, help, quit) for the front end to run; Do refuses them.
func (s *Session) ParseLine(text string, cur int) (Command, error) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		fields = []string{"n"}
	}
	l := line{word: fields[0], args: fields[1:], rest: restOf(text), cur: cur}
	for _, c := range Commands {
		for _, w := range c.Words {
			if w != l.word {
				continue
			}
			cmd, err := c.parse(s, l)
			if err != nil {
				return Command{}, err
			}
			if cmd.Op == "" {
				cmd.Op = c.Op
			}
			return cmd, nil
		}
	}
	return Command{}, fmt.Errorf("unknown command %q (help lists the commands)", l.word)
}

// parseBare reads a command without arguments (ParseLine sets its Op).
func parseBare(_ *Session, l line) (Command, error) {
	return Command{}, l.want(0, "no arguments")
}

// errNoCurrent refuses decode and fork before any sequence is current.
var errNoCurrent = errors.New("no current sequence: add a prompt first")

func parseNext(_ *Session, l line) (Command, error) {
	if l.cur < 0 {
		return Command{}, errNoCurrent
	}
	if len(l.args) > 1 {
		return Command{}, l.want(1, "at most one number, the tokens to decode")
	}
	k := 1
	if len(l.args) == 1 {
		var err error
		if k, err = strconv.Atoi(l.args[0]); err != nil || k < 1 {
			return Command{}, fmt.Errorf("n takes a number of tokens ≥ 1, got %q", l.args[0])
		}
	}
	return Command{Op: "decode", Seq: l.cur, N: k}, nil
}

// NoTokenError is pick's error for a text that is no token of the vocabulary.
type NoTokenError struct{ Text string }

// Error names the text.
func (e NoTokenError) Error() string { return fmt.Sprintf("no token is the text %q", e.Text) }

// parsePick reads the argument of pick: a token id, or a token's text in double quotes as
// the display shows it (" big", "\n"), or a vocabulary entry such as </s>. A text that is
// no token is a NoTokenError.
func parsePick(s *Session, l line) (Command, error) {
	tok := s.m.Tokenizer
	vocab := tok.VocabSize()
	arg := l.rest
	usage := fmt.Errorf("pick takes a token id from 0 to %d or a token's text in quotes, as shown (pick 410, pick \" big\"), got %q", vocab-1, arg)
	pick := func(id int) (Command, error) { return Command{Op: "decode", Seq: l.cur, N: 1, Token: &id}, nil }
	if l.cur < 0 {
		return Command{}, errNoCurrent
	}
	if arg == "" {
		return Command{}, usage
	}
	if id, err := strconv.Atoi(arg); err == nil {
		if id < 0 || id >= vocab {
			return Command{}, usage
		}
		return pick(id)
	}
	text, err := unquote(arg)
	if err != nil {
		return Command{}, fmt.Errorf("pick: %w", err)
	}
	if id, ok := tokenizer.Lookup(tok, text); ok {
		return pick(id)
	}
	return Command{}, fmt.Errorf("pick: %w", NoTokenError{text})
}

func parseFork(_ *Session, l line) (Command, error) {
	if l.cur < 0 {
		return Command{}, errNoCurrent
	}
	return Command{Op: "fork", Seq: l.cur}, l.want(0, "no arguments")
}

// parseSeqArg reads switch N and free N: N must be a live sequence.
func parseSeqArg(s *Session, l line) (Command, error) {
	if err := l.want(1, "a sequence number"); err != nil {
		return Command{}, err
	}
	id, err := strconv.Atoi(l.args[0])
	if err != nil || s.seqs[id] == nil {
		return Command{}, fmt.Errorf("no sequence %q; the live ones are %s (seqs lists them)", l.args[0], s.liveIDs())
	}
	return Command{Op: l.word, Seq: id}, nil
}

func parseAdd(_ *Session, l line) (Command, error) {
	text, err := unquote(l.rest)
	if err != nil {
		return Command{}, fmt.Errorf("add: %w", err)
	}
	return Command{Op: "add", Text: text}, nil
}

func parseTop(s *Session, l line) (Command, error) {
	if err := l.want(1, "a number of alternatives"); err != nil {
		return Command{}, err
	}
	k, err := strconv.Atoi(l.args[0])
	if vocab := s.m.Tokenizer.VocabSize(); err != nil || k < 0 || k > vocab {
		return Command{}, fmt.Errorf("top takes a number from 0 to %d, got %q", vocab, l.args[0])
	}
	return Command{Op: "top", N: k}, nil
}

func parseTemp(_ *Session, l line) (Command, error) {
	if err := l.want(1, "a temperature"); err != nil {
		return Command{}, err
	}
	t, err := strconv.ParseFloat(l.args[0], 64)
	if err != nil || t < 0 || math.IsNaN(t) || math.IsInf(t, 0) {
		return Command{}, fmt.Errorf("temp takes a number ≥ 0 (0: greedy), got %q", l.args[0])
	}
	return Command{Op: "temperature", Temperature: &t}, nil
}

func parseSeed(_ *Session, l line) (Command, error) {
	if err := l.want(1, "a seed"); err != nil {
		return Command{}, err
	}
	seed, err := strconv.ParseUint(l.args[0], 10, 64)
	if err != nil {
		return Command{}, fmt.Errorf("seed takes a whole number ≥ 0, got %q", l.args[0])
	}
	return Command{Op: "seed", Seed: &seed}, nil
}

func parseAttn(s *Session, l line) (Command, error) {
	if err := l.want(1, "LAYER, LAYER:HEAD or off"); err != nil {
		return Command{}, err
	}
	cfg := s.m.Config
	a, err := ParseAttention(l.args[0], cfg.Layers, cfg.Heads)
	if err != nil {
		return Command{}, fmt.Errorf("attn: %w", err)
	}
	return Command{Op: "attention", Layer: &a.Layer, Head: &a.Head}, nil
}

// restOf returns a command line without its first word, spaces trimmed.
func restOf(text string) string {
	text = strings.TrimSpace(text)
	if i := strings.IndexAny(text, " \t"); i >= 0 {
		return strings.TrimSpace(text[i:])
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
