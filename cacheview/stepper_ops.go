package cacheview

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/kvref/kvref/engine"
)

// maxCommandBytes bounds a command's body.
const maxCommandBytes = 1 << 20

// readCommand decodes a command, refusing unknown fields and trailing data.
func readCommand(w http.ResponseWriter, r *http.Request) (Command, error) {
	var cmd Command
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxCommandBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cmd); err != nil {
		return cmd, fmt.Errorf("the body must be one JSON command such as {\"op\": \"decode\", \"seq\": 0}: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return cmd, fmt.Errorf("the body must hold one JSON command, it has more after it")
	}
	return cmd, nil
}

// do runs a command; the lock is held.
func (s *Stepper) do(cmd Command) (Record, error) {
	switch cmd.Op {
	case "add":
		return s.add(cmd.Text)
	case "decode":
		return s.decode(cmd)
	case "fork":
		q, err := s.seq(cmd.Seq)
		if err != nil {
			return Record{}, err
		}
		f := s.sess.Fork(q)
		return Record{Seq: f.Seq.ID(), Events: poolEvents(f.Events),
			Message: fmt.Sprintf("seq %d forks seq %d: it shares all %s of its table %v (refcounts +1), nothing is copied; the first write into a shared block will copy it",
				f.Seq.ID(), q.ID(), plural(len(q.KV.Table()), "block"), q.KV.Table())}, nil
	case "free":
		q, err := s.seq(cmd.Seq)
		if err != nil {
			return Record{}, err
		}
		f := s.sess.Free(q)
		return Record{Seq: -1, Events: poolEvents(f.Events),
			Message: fmt.Sprintf("seq %d ends: its %s lose a reference; full blocks nobody holds stay cached for prefix hits", q.ID(), plural(len(f.Table), "block"))}, nil
	case "temperature":
		if cmd.Temperature == nil || *cmd.Temperature < 0 || math.IsNaN(*cmd.Temperature) || math.IsInf(*cmd.Temperature, 0) {
			return Record{}, badCommand("temperature needs \"temperature\": a number ≥ 0 (0: greedy)")
		}
		s.sess.SetTemperature(*cmd.Temperature)
		s.sampling = s.sess.Sampling()
		return Record{Seq: -1, Message: fmt.Sprintf("temperature %g for every sequence from now on", *cmd.Temperature)}, nil
	case "seed":
		if cmd.Seed == nil {
			return Record{}, badCommand("seed needs \"seed\": a whole number ≥ 0")
		}
		s.sess.SetSeed(*cmd.Seed)
		s.sampling = s.sess.Sampling()
		return Record{Seq: -1, Message: fmt.Sprintf("seed %d: every sequence samples with a seed derived from it and its id", *cmd.Seed)}, nil
	case "attention":
		return s.attention(cmd)
	case "reset":
		return s.reset(cmd)
	case "":
		return Record{}, badCommand("the command has no \"op\"; ops are add, decode, fork, free, temperature, seed, attention, reset")
	}
	return Record{}, badCommand("unknown op %q; ops are add, decode, fork, free, temperature, seed, attention, reset", cmd.Op)
}

// seq finds a live sequence.
func (s *Stepper) seq(id int) (*engine.SessionSeq, error) {
	if q := s.sess.Seq(id); q != nil {
		return q, nil
	}
	var ids []string
	for _, q := range s.sess.Live() {
		ids = append(ids, fmt.Sprint(q.ID()))
	}
	if len(ids) == 0 {
		return nil, badCommand("no sequence %d: there are none; add a prompt first", id)
	}
	return nil, badCommand("no sequence %d; the live ones are %s", id, strings.Join(ids, ", "))
}

// add starts a sequence from a prompt.
func (s *Stepper) add(text string) (Record, error) {
	ids := s.m.Tokenizer.EncodeSpecial(text, true, true)
	if len(ids) == 0 {
		return Record{}, badCommand("the prompt %q has no tokens (this tokenizer adds no BOS); give some text", text)
	}
	if len(ids) >= s.eng.Context {
		return Record{}, badCommand("the prompt has %d tokens; the context holds %d and one more is needed to decode", len(ids), s.eng.Context)
	}
	a, err := s.sess.Add(ids)
	if err != nil {
		return Record{}, sessionError(err)
	}
	add := &Added{Tokens: ids, Text: make([]string, len(ids)), Hit: a.Hit}
	for i, id := range ids {
		add.Text[i] = s.label(id)
	}
	msg := fmt.Sprintf("seq %d: prompt of %s, %d from the cache (prefix hit), %d computed in one forward pass; table %v",
		a.Seq.ID(), plural(len(ids), "token"), a.Hit, len(ids)-a.Hit, a.Seq.KV.Table())
	return Record{Seq: a.Seq.ID(), Added: add, Events: poolEvents(a.Events), Message: msg}, nil
}

// decode decodes n tokens of one sequence, or one forced token.
func (s *Stepper) decode(cmd Command) (Record, error) {
	q, err := s.seq(cmd.Seq)
	if err != nil {
		return Record{}, err
	}
	n := max(cmd.N, 1)
	forced := -1
	switch {
	case n > MaxDecodeSteps:
		return Record{}, badCommand("decode takes at most %d tokens at once, got %d", MaxDecodeSteps, n)
	case cmd.Token != nil && n != 1:
		return Record{}, badCommand("a picked token decodes one step; n must be 1, got %d", n)
	case cmd.Token != nil:
		if *cmd.Token < 0 || *cmd.Token >= s.m.Config.Vocab {
			return Record{}, badCommand("token must be an id from 0 to %d, got %d", s.m.Config.Vocab-1, *cmd.Token)
		}
		forced = *cmd.Token
	}
	rec := Record{Seq: q.ID()}
	for i := range n {
		if q.KV.Len() >= s.eng.Context {
			if i == 0 {
				return Record{}, badCommand("seq %d fills the whole context (%d tokens); fork it, add a new prompt, or free it", q.ID(), s.eng.Context)
			}
			break
		}
		d, err := s.sess.Decode(q, forced, topAlternatives)
		if err != nil {
			if i == 0 {
				return Record{}, sessionError(err)
			}
			rec.Message = fmt.Sprintf("stopped after %s: %v", plural(i, "token"), sessionError(err))
			break
		}
		rec.Decoded = append(rec.Decoded, s.decoded(d, i == n-1))
		rec.Events = append(rec.Events, poolEvents(d.Events)...)
	}
	if rec.Message == "" {
		last := rec.Decoded[len(rec.Decoded)-1]
		rec.Message = fmt.Sprintf("seq %d: %s decoded, the last %s (p %.4f) at pos %d → block %d, slot %d",
			q.ID(), plural(len(rec.Decoded), "token"), quoted(last.Text), last.P, last.Pos, last.Block, last.Slot)
	}
	return rec, nil
}

// decoded describes one decode step; withAttention keeps its attention weights (only the
// last step of a command does, to keep the answer small).
func (s *Stepper) decoded(d engine.Decoded, withAttention bool) Decoded {
	out := Decoded{Seq: d.Seq.ID(), Pos: d.Pos, Token: d.Token, Text: s.label(d.Token), How: d.How, P: d.P, Rank: d.Rank,
		Block: d.Block, Slot: d.Slot, NewBlock: len(d.Cache.New) > 0, CopiedFrom: -1, Evicted: []int{}}
	for i, id := range d.Top {
		out.Top = append(out.Top, Alternative{Token: id, Text: s.label(id), P: d.Probs[i]})
	}
	if len(d.Cache.Copies) > 0 {
		c := d.Cache.Copies[0]
		out.CopiedFrom, out.CopiedSlots = c.From, c.Slots
	}
	for _, e := range d.Cache.Evictions {
		out.Evicted = append(out.Evicted, e.Block)
	}
	if withAttention && d.Attention != nil {
		a := &Attention{Layer: s.attn.Layer, Head: s.attn.Head, Table: slices.Clone(d.Seq.KV.Table())}
		if s.attn.Head >= 0 {
			for _, w := range d.Attention[s.attn.Head] {
				a.Weights = append(a.Weights, float64(w))
			}
		} else {
			a.Weights = d.MeanAttention()
		}
		out.Attention = a
	}
	return out
}

// attention chooses the layer and head whose weights decode steps record.
func (s *Stepper) attention(cmd Command) (Record, error) {
	c := s.m.Config
	if cmd.Layer == nil {
		return Record{}, badCommand("attention needs \"layer\": 0 to %d, or -1 for off", c.Layers-1)
	}
	a := engine.AttentionChoice{Layer: *cmd.Layer, Head: -1}
	if cmd.Head != nil {
		a.Head = *cmd.Head
	}
	switch {
	case a.Layer < -1 || a.Layer >= c.Layers:
		return Record{}, badCommand("layer must be from 0 to %d, or -1 for off, got %d", c.Layers-1, a.Layer)
	case a.Head < -1 || a.Head >= c.Heads:
		return Record{}, badCommand("head must be from 0 to %d, or -1 for the mean over heads, got %d", c.Heads-1, a.Head)
	}
	if a.Layer < 0 {
		a.Head = -1
	}
	s.attn = a
	s.sess.SetAttention(a)
	switch {
	case a.Layer < 0:
		return Record{Seq: -1, Message: "attention off"}, nil
	case a.Head < 0:
		return Record{Seq: -1, Message: fmt.Sprintf("attention: layer %d, the mean of %d heads, for each new token", a.Layer, c.Heads)}, nil
	}
	return Record{Seq: -1, Message: fmt.Sprintf("attention: layer %d, head %d, for each new token", a.Layer, a.Head)}, nil
}

// reset starts again with an empty pool, of another size if asked.
func (s *Stepper) reset(cmd Command) (Record, error) {
	cfg := s.cfg
	if cmd.Blocks != 0 {
		cfg.CacheBlocks = cmd.Blocks
	}
	if cmd.BlockSize != 0 {
		cfg.BlockSize = cmd.BlockSize
	}
	switch {
	case cfg.CacheBlocks < 0 || cfg.CacheBlocks > MaxResetBlocks:
		return Record{}, badCommand("blocks must be from 1 to %d, got %d", MaxResetBlocks, cfg.CacheBlocks)
	case cfg.BlockSize < 0 || cfg.BlockSize > MaxBlockSize:
		return Record{}, badCommand("block_size must be from 1 to %d, got %d", MaxBlockSize, cfg.BlockSize)
	}
	eng, err := engine.New(s.m, cfg)
	if err != nil {
		return Record{}, badCommand("%v", err)
	}
	s.sess.Close()
	s.eng.Close()
	s.cfg, s.eng = cfg, eng
	s.sess = eng.NewSession(s.sampling, s.check)
	s.sess.SetAttention(s.attn)
	pc := eng.Pool.Config()
	return Record{Seq: -1, Events: []Event{{Kind: "reset", Seq: -1, Block: -1, Index: -1, From: -1, Request: -1, Choice: -1, Blocks: pc.NumBlocks, Slots: pc.BlockSize}},
		Message: fmt.Sprintf("a new, empty pool: %d blocks of %d slots", pc.NumBlocks, pc.BlockSize)}, nil
}
