package cacheview

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kvref/kvref/tokenizer"
)

// DefaultRequestHistory is how many finished requests a server keeps for its requests panel
// (kvref serve --view-requests).
const DefaultRequestHistory = 64

// MaxRequestSequences is how many continuations of one request the requests panel keeps the
// blocks of (the first ones; a request may have up to 128).
const MaxRequestSequences = 16

// PromptRunes is how much of a prompt's text the requests panel keeps.
const PromptRunes = 60

// Request is one line of the requests panel: a request of kvref serve, live or recently
// finished, with the blocks each of its sequences held.
type Request struct {
	ID           int    `json:"id"`            // the server's number for it, from 1 (events carry it as "request")
	Prompt       string `json:"prompt"`        // the start of the prompt's text (PromptRunes runes at most, then "…")
	PromptTokens int    `json:"prompt_tokens"` // tokens in the prompt
	// Reused is how many prompt tokens came from the prefix cache at its first admission
	// (the admit event's "computed"); -1 while it waits for its first admission.
	Reused      int          `json:"reused"`
	Choices     int          `json:"choices"`          // its continuations (n)
	State       string       `json:"state"`            // "waiting", "running" or "finished"
	Finish      string       `json:"finish,omitempty"` // finished: its continuations' stop reasons, or its error
	Preemptions int          `json:"preemptions"`
	Submitted   time.Time    `json:"submitted"`
	Ended       *time.Time   `json:"ended,omitempty"`
	Sequences   []RequestSeq `json:"sequences"` // its first MaxRequestSequences continuations
}

// RequestSeq is one continuation of a Request and the blocks it holds (live) or held when it
// ended.
type RequestSeq struct {
	Choice int    `json:"choice"`
	Seq    int    `json:"seq"`              // its cache sequence (-1: not admitted yet, or preempted and waiting)
	State  string `json:"state"`            // "waiting", "running", "preempted" or "finished"
	Finish string `json:"finish,omitempty"` // why it ended
	// Blocks is its block table (-1: a hole of a sliding window); for a finished sequence the
	// table it had when it ended.
	Blocks []int `json:"blocks"`
	// Stale lists the blocks of Blocks that have since been given to other tokens (reused
	// after an eviction or a free): the pool no longer holds what this sequence wrote there.
	Stale []int `json:"stale,omitempty"`
}

// Requests follows the requests of a server from the same event stream the page shows: the
// server tells it when a request is submitted and when it ends, and hands it every event of
// the pool and the scheduler before publishing them (Observe), from which it learns which
// cache sequence serves which request and which blocks each one holds. It keeps the live
// requests and a ring of the last finished ones. It is not safe for concurrent use: the
// engine loop owns it.
type Requests struct {
	keep  int
	next  int                // the last ID given
	live  map[int]*reqRecord // by the engine's request id
	done  []*reqRecord       // ring of finished requests, oldest at done[start]
	start int                // the oldest finished request in done
	seqs  map[int]*seqTrack  // live cache sequences, by id
	gen   []uint32           // per block: how many times it was given new tokens (alloc, cow)
}

type reqRecord struct {
	Request
	seqOf    []*seqTrack // per choice (nil: none), while live
	doneGens [][]uint32  // once finished: per sequence, the gen of each of its blocks
}

type seqTrack struct {
	id     int
	blocks []int
	gens   []uint32 // gen of each block when this sequence took it
	freed  bool
	owner  *reqRecord
	choice int
}

// NewRequests returns a tracker that keeps the last keep finished requests (< 0:
// DefaultRequestHistory).
func NewRequests(keep int) *Requests {
	if keep < 0 {
		keep = DefaultRequestHistory
	}
	return &Requests{keep: keep, live: map[int]*reqRecord{}, seqs: map[int]*seqTrack{}}
}

// Keep is how many finished requests the tracker keeps.
func (r *Requests) Keep() int { return r.keep }

// Submit records a new request of the engine (id: the scheduler's request id) and returns
// the "submit" event to publish, which carries the request's ID.
func (r *Requests) Submit(engineID int, prompt string, promptTokens, choices int, now time.Time) Event {
	r.next++
	rec := &reqRecord{Request: Request{ID: r.next, Prompt: prompt, PromptTokens: promptTokens, Reused: -1,
		Choices: max(choices, 1), State: "waiting", Submitted: now}}
	rec.seqOf = make([]*seqTrack, rec.Choices)
	r.live[engineID] = rec
	return Event{Kind: "submit", Seq: -1, Block: -1, Index: -1, From: -1, Request: rec.ID, Choice: -1,
		Tokens: promptTokens, Blocks: rec.Choices}
}

// End records the end of a request of the engine (reasons: each continuation's stop reason;
// failure: the error that ended it, if any) and returns the "finish" event to publish
// (ok false when the request is unknown).
func (r *Requests) End(engineID int, reasons []string, failure string, now time.Time) (Event, bool) {
	rec := r.live[engineID]
	if rec == nil {
		return Event{}, false
	}
	delete(r.live, engineID)
	rec.State = "finished"
	rec.Ended = &now
	finish := summarize(reasons)
	if failure != "" {
		finish = "error: " + failure
	}
	rec.Finish = finish
	n := min(rec.Choices, MaxRequestSequences)
	rec.Sequences = make([]RequestSeq, n)
	for c := range n {
		q := RequestSeq{Choice: c, Seq: -1, State: "finished"}
		if c < len(reasons) {
			q.Finish = reasons[c]
		}
		if t := rec.seqOf[c]; t != nil {
			q.Seq, q.Blocks = t.id, t.blocks
		}
		rec.Sequences[c] = q
	}
	for _, t := range rec.seqOf {
		if t != nil {
			delete(r.seqs, t.id)
		}
	}
	// Keep the gens of the finished tables (to tell later which blocks were given away),
	// and drop the rest.
	gens := make([][]uint32, n)
	for c := range n {
		if t := rec.seqOf[c]; t != nil {
			gens[c] = t.gens
		}
	}
	rec.seqOf, rec.doneGens = nil, gens
	r.push(rec)
	if len(r.live) == 0 {
		clear(r.seqs) // no request left: any sequence still tracked belongs to none
	}
	return Event{Kind: "finish", Seq: -1, Block: -1, Index: -1, From: -1, Request: rec.ID, Choice: -1,
		Reason: finish, Computed: max(rec.Reused, 0), Tokens: rec.PromptTokens, Blocks: rec.Choices}, true
}

// push adds a finished request to the ring.
func (r *Requests) push(rec *reqRecord) {
	if r.keep == 0 {
		return
	}
	if len(r.done) < r.keep {
		r.done = append(r.done, rec)
		return
	}
	r.done[r.start] = rec
	r.start = (r.start + 1) % r.keep
}

// summarize joins the stop reasons of a request's continuations: "length" for one, or
// "length ×3, eos" for several.
func summarize(reasons []string) string {
	var parts []string
	for i := 0; i < len(reasons); {
		j := i
		for j < len(reasons) && reasons[j] == reasons[i] {
			j++
		}
		part := reasons[i]
		if part == "" {
			part = "—"
		}
		if j-i > 1 {
			part += " ×" + itoa(j-i)
		}
		parts = append(parts, part)
		i = j
	}
	return strings.Join(parts, ", ")
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}

// Observe learns from one event of the pool or the scheduler, before it is published: it
// follows each cache sequence's table, and, for the scheduler's events, links the sequence
// to its request and replaces the engine's request id in e by the request's ID.
func (r *Requests) Observe(e *Event) {
	switch e.Kind {
	case "alloc", "cow", "prefix_hit", "fork":
		if e.Seq < 0 || e.Index < 0 || e.Block < 0 {
			return
		}
		t := r.seqs[e.Seq]
		if t == nil {
			t = &seqTrack{id: e.Seq, choice: -1}
			r.seqs[e.Seq] = t
		}
		for len(r.gen) <= e.Block {
			r.gen = append(r.gen, 0)
		}
		if e.Kind == "alloc" || e.Kind == "cow" {
			r.gen[e.Block]++ // the block gets new tokens
		}
		for len(t.blocks) <= e.Index {
			t.blocks, t.gens = append(t.blocks, -1), append(t.gens, 0)
		}
		t.blocks[e.Index], t.gens[e.Index] = e.Block, r.gen[e.Block]
	case "reclaim":
		if t := r.seqs[e.Seq]; t != nil && e.Index >= 0 && e.Index < len(t.blocks) {
			t.blocks[e.Index] = -1
		}
	case "release":
		if t := r.seqs[e.Seq]; t != nil {
			t.freed = true
		}
	case "admit", "fork_seq", "preempt":
		rec := r.live[e.Request]
		if rec == nil {
			return
		}
		e.Request = rec.ID
		if e.Choice < 0 || e.Choice >= len(rec.seqOf) {
			return
		}
		if e.Kind == "preempt" {
			rec.Preemptions++
			if t := rec.seqOf[e.Choice]; t != nil {
				delete(r.seqs, t.id) // its blocks are released next
			}
			rec.seqOf[e.Choice] = &seqTrack{id: -1, choice: e.Choice, owner: rec, freed: true}
			return
		}
		t := r.seqs[e.Seq]
		if t == nil {
			t = &seqTrack{id: e.Seq}
			r.seqs[e.Seq] = t
		}
		t.owner, t.choice = rec, e.Choice
		rec.seqOf[e.Choice] = t
		rec.State = "running"
		if e.Kind == "admit" && rec.Reused < 0 {
			rec.Reused = e.Computed
		}
	}
}

// Snapshot lists the live requests (oldest first) and then the finished ones the tracker
// keeps (newest first).
func (r *Requests) Snapshot() []Request {
	out := make([]Request, 0, len(r.live)+len(r.done))
	live := make([]*reqRecord, 0, len(r.live))
	for _, rec := range r.live {
		live = append(live, rec)
	}
	slices.SortFunc(live, func(a, b *reqRecord) int { return a.ID - b.ID })
	for _, rec := range live {
		q := rec.Request
		n := min(rec.Choices, MaxRequestSequences)
		q.Sequences = make([]RequestSeq, n)
		for c := range n {
			s := RequestSeq{Choice: c, Seq: -1, State: "waiting"}
			if t := rec.seqOf[c]; t != nil {
				switch {
				case t.id < 0:
					s.State = "preempted"
				case t.freed:
					s.Seq, s.State, s.Blocks = t.id, "finished", slices.Clone(t.blocks)
				default:
					s.Seq, s.State, s.Blocks = t.id, "running", slices.Clone(t.blocks)
				}
			}
			q.Sequences[c] = s
		}
		out = append(out, q)
	}
	for i := len(r.done) - 1; i >= 0; i-- {
		rec := r.done[(r.start+i)%len(r.done)]
		q := rec.Request
		q.Sequences = slices.Clone(q.Sequences)
		for c := range q.Sequences {
			s := &q.Sequences[c]
			s.Stale = nil
			for j, b := range s.Blocks {
				if b >= 0 && c < len(rec.doneGens) && j < len(rec.doneGens[c]) && b < len(r.gen) && r.gen[b] != rec.doneGens[c][j] {
					s.Stale = append(s.Stale, b)
				}
			}
		}
		out = append(out, q)
	}
	return out
}

// PromptStart is the start of a prompt's text for the requests panel: its tokens' text
// (TokenText; leading control tokens such as BOS left out) up to PromptRunes runes, then "…". It looks at no more than 4·PromptRunes
// tokens, however long the prompt.
func PromptStart(tok tokenizer.Tokenizer, ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		if i == 4*PromptRunes {
			b.WriteString("…")
			break
		}
		if len(tok.Piece(id)) == 0 && b.Len() == 0 {
			continue // a leading control token (BOS) adds no text
		}
		b.WriteString(TokenText(tok, id))
		if s := b.String(); utf8.RuneCountInString(s) > PromptRunes {
			n := 0
			for j := range s {
				if n == PromptRunes {
					return s[:j] + "…"
				}
				n++
			}
		}
	}
	return b.String()
}
