package cacheview

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/kvref/kvref/stepper"
)

// maxCommandBytes bounds a command's body.
const maxCommandBytes = 1 << 20

// readCommand decodes a command, refusing unknown fields and trailing data.
func readCommand(w http.ResponseWriter, r *http.Request) (stepper.Command, error) {
	var cmd stepper.Command
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

// record describes what a command did, for the page; the lock is held.
func (s *Stepper) record(cmd stepper.Command, r stepper.Result) StepRecord {
	switch cmd.Op {
	case "add":
		a := r.Added
		ids := a.Seq.KV.Tokens()
		add := &StepPrompt{Tokens: ids, Text: make([]string, len(ids)), Hit: a.Hit}
		for i, id := range ids {
			add.Text[i] = s.label(id)
		}
		msg := fmt.Sprintf("seq %d: prompt of %s, %d from the cache (prefix hit), %d computed in one forward pass; table %v",
			a.Seq.ID(), plural(len(ids), "token"), a.Hit, len(ids)-a.Hit, a.Seq.KV.Table())
		return StepRecord{Seq: a.Seq.ID(), Added: add, Events: poolEvents(a.Events), Message: msg}
	case "decode":
		return s.decodeRecord(r)
	case "fork":
		f := r.Forked
		q := s.sess.Seq(f.Seq.Parent)
		return StepRecord{Seq: f.Seq.ID(), Events: poolEvents(f.Events),
			Message: fmt.Sprintf("seq %d forks seq %d: it shares all %s of its table %v (refcounts +1), nothing is copied; the first write into a shared block will copy it",
				f.Seq.ID(), q.ID(), plural(len(q.KV.Table()), "block"), q.KV.Table())}
	case "free":
		f := r.Freed
		if s.last != nil && s.last.Seq == f.ID {
			s.last = nil
		}
		return StepRecord{Seq: -1, Events: poolEvents(f.Events),
			Message: fmt.Sprintf("seq %d ends: its %s lose a reference; full blocks nobody holds stay cached for prefix hits", f.ID, plural(len(f.Table), "block"))}
	case "temperature":
		return StepRecord{Seq: -1, Message: fmt.Sprintf("temperature %g for every sequence from now on", *cmd.Temperature)}
	case "seed":
		return StepRecord{Seq: -1, Message: fmt.Sprintf("seed %d: every sequence samples with a seed derived from it and its id", *cmd.Seed)}
	case "attention":
		a, c := s.sess.Attention(), s.m.Config
		switch {
		case a.Layer < 0:
			return StepRecord{Seq: -1, Message: "attention off"}
		case a.Head < 0:
			return StepRecord{Seq: -1, Message: fmt.Sprintf("attention: layer %d, the mean of %d heads, for each new token", a.Layer, c.Heads)}
		}
		return StepRecord{Seq: -1, Message: fmt.Sprintf("attention: layer %d, head %d, for each new token", a.Layer, a.Head)}
	case "reset":
		s.last = nil
		pc := s.sess.Engine().Pool().Config()
		return StepRecord{Seq: -1, Events: []Event{{Kind: "reset", Seq: -1, Block: -1, Index: -1, From: -1, Request: -1, Choice: -1, Blocks: pc.NumBlocks, Slots: pc.BlockSize}},
			Message: fmt.Sprintf("a new, empty pool: %d blocks of %d slots", pc.NumBlocks, pc.BlockSize)}
	}
	return StepRecord{Seq: -1, Message: cmd.Op}
}

// decodeRecord describes a decode command's steps.
func (s *Stepper) decodeRecord(r stepper.Result) StepRecord {
	rec := StepRecord{Seq: r.Seq.ID()}
	for i, d := range r.Decoded {
		rec.Decoded = append(rec.Decoded, s.decoded(d, i == len(r.Decoded)-1))
		rec.Events = append(rec.Events, poolEvents(d.Events)...)
	}
	last := rec.Decoded[len(rec.Decoded)-1]
	s.last = &last
	if r.Stopped != nil {
		rec.Message = fmt.Sprintf("stopped after %s: %v", plural(len(rec.Decoded), "token"), sessionError(r.Stopped))
		return rec
	}
	rec.Message = fmt.Sprintf("seq %d: %s decoded, the last %s (p %.4f) at pos %d → block %d, slot %d",
		r.Seq.ID(), plural(len(rec.Decoded), "token"), quoted(last.Text), last.P, last.Pos, last.Block, last.Slot)
	return rec
}

// decoded describes one decode step; withAttention keeps its attention weights (only the
// last step of a command does, to keep the answer small).
func (s *Stepper) decoded(d stepper.Decoded, withAttention bool) StepToken {
	out := StepToken{Seq: d.Seq.ID(), Pos: d.Pos, Token: d.Token, Text: s.label(d.Token), How: d.How, P: d.P, Rank: d.Rank,
		Block: d.Block, Slot: d.Slot, NewBlock: len(d.Cache.New) > 0, CopiedFrom: -1, Evicted: []int{}, Checked: d.Check != nil}
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
		choice := s.sess.Attention()
		a := &Attention{Layer: choice.Layer, Head: choice.Head, Table: slices.Clone(d.Seq.KV.Table())}
		if choice.Head >= 0 {
			for _, w := range d.Attention[choice.Head] {
				a.Weights = append(a.Weights, float64(w))
			}
		} else {
			a.Weights = d.MeanAttention()
		}
		out.Attention = a
	}
	return out
}
