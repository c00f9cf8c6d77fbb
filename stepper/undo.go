package stepper

import (
	"errors"
	"fmt"

	"github.com/kvref/kvref/engine"
)

// opKind is what one recorded operation did.
type opKind int

const (
	opAdd opKind = iota
	opDecode
	opFork
	opFree
	opTemperature
	opSeed
	opAttention
	opReset
)

// op is one operation of the session's history, with what replaying it needs.
type op struct {
	kind        opKind
	ids         []int // add: the prompt
	seq         int   // decode, fork, free: the sequence
	forced      int   // decode: the forced token, or -1 to sample
	token       int   // decode: the token it appended (a replay must append the same)
	temperature float64
	seed        uint64
	attn        AttentionChoice
	cfg         engine.Config // reset
}

// ErrNothingToUndo is Undo's error when no command is left to take back.
var ErrNothingToUndo = errors.New("nothing to undo")

// record appends an operation to the history: to the running command inside Do, else as
// a command of its own. A replay records nothing.
func (s *Session) record(o op) {
	if s.replaying {
		return
	}
	if !s.grouping {
		s.marks = append(s.marks, len(s.ops))
	}
	s.ops = append(s.ops, o)
}

// begin starts a command: the operations until end form one entry of the history.
func (s *Session) begin() {
	s.grouping = true
	s.marks = append(s.marks, len(s.ops))
}

// end closes the command begin started; a command that changed nothing leaves no entry.
func (s *Session) end() {
	s.grouping = false
	if n := len(s.marks); n > 0 && s.marks[n-1] == len(s.ops) {
		s.marks = s.marks[:n-1]
	}
}

// Undoable returns how many commands Undo can take back: every command since the
// session started (each Do, or each call of Add, Decode, Fork, Free, SetTemperature,
// SetSeed, SetAttention or Reset outside Do).
func (s *Session) Undoable() int { return len(s.marks) }

// Undo takes back the last command: it replays every earlier one on a fresh engine built
// as the session started, so the pool, the block tables, the event log and every sampler
// are exactly what they were before that command (a decode samples the same next token).
// The replay is as long as the history (one forward pass per recorded step) and runs
// without the check, probes and alternatives, which change no bit of the cache. Every
// Seq is replaced: look sequences up again by id.
func (s *Session) Undo() error {
	n := len(s.marks)
	if n == 0 {
		return ErrNothingToUndo
	}
	ops := s.ops[:s.marks[n-1]]
	if err := s.replay(ops); err != nil {
		return err
	}
	s.ops, s.marks = ops, s.marks[:n-1]
	return nil
}

// replay rebuilds the session from its start by running ops again.
func (s *Session) replay(ops []op) error {
	s.replaying = true
	defer func() { s.replaying = false }()
	if err := s.restart(); err != nil {
		return fmt.Errorf("%w: undo: %w", ErrBroken, err)
	}
	for i, o := range ops {
		if err := s.apply(o); err != nil {
			return fmt.Errorf("%w: undo: replaying operation %d of %d: %w", ErrBroken, i+1, len(ops), err)
		}
	}
	s.events = nil
	return nil
}

// apply runs one recorded operation again.
func (s *Session) apply(o op) error {
	q := s.seqs[o.seq]
	if q == nil && (o.kind == opDecode || o.kind == opFork || o.kind == opFree) {
		return fmt.Errorf("sequence %d is not live", o.seq)
	}
	switch o.kind {
	case opAdd:
		_, err := s.Add(o.ids)
		return err
	case opDecode:
		d, err := s.Decode(q, o.forced, 0)
		if err == nil && d.Token != o.token {
			err = fmt.Errorf("seq %d decoded token %d, not %d as the first time", o.seq, d.Token, o.token)
		}
		return err
	case opFork:
		s.Fork(q)
	case opFree:
		s.Free(q)
	case opTemperature:
		s.SetTemperature(o.temperature)
	case opSeed:
		s.SetSeed(o.seed)
	case opAttention:
		s.SetAttention(o.attn)
	case opReset:
		return s.Reset(o.cfg)
	}
	return nil
}
