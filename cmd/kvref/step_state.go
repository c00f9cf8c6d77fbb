package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
)

// stepper is the whole state of a `kvref step` session: the engine (model, runner, cache
// pool), the live sequences with their samplers and logits, and the display settings.
// Every command is a method; nothing else holds state.
type stepper struct {
	m        *model.Model
	eng      *engine.Engine
	out      io.Writer
	color    bool
	sampling engine.Sampling  // every sequence's parameters; each has its own seed
	top      int              // alternatives shown per token
	attn     attnChoice       // attention display (layer < 0: off)
	seqs     map[int]*stepSeq // live sequences by id (the pool's sequence ids)
	cur      *stepSeq         // the sequence that n, pick and fork act on

	// probe collects the attention weights of the token being decoded (see decode).
	probeMu    sync.Mutex
	probeHeads map[int][]float32 // the chosen layer's weights by head (heads run in parallel)

	// afterCommand, when set, is called after every command with its line: tests use it
	// to compare what was printed with the pool's own state.
	afterCommand func(line string)
}

// stepSeq is one live sequence of the session.
type stepSeq struct {
	kv      *kvcache.Sequence
	seed    uint64 // derived from --seed and the sequence id
	reseeds uint64 // times the sampler was rebuilt (temp), mixed into its seed
	sampler *engine.Sampler
	logits  []float32 // at the last computed position: the distribution of the next token
	prompt  int       // prompt tokens
	parent  int       // the sequence it was forked from, or -1
}

// attnChoice is what --attn / attn selects: a layer and a head (head < 0: the mean over
// heads); layer < 0 is off.
type attnChoice struct{ layer, head int }

// decoded is what one decode step did, for display.
type decoded struct {
	seq          *stepSeq
	pos, token   int
	how          string        // sampled, greedy or picked
	p            float64       // the model's probability of the token
	rank         int           // 1 for the most likely token
	block, slot  int           // where its K/V went
	event        string        // "" (a block it already had), "new" or "cow"
	evicted      bool          // the new block was a cached one, evicted from the prefix index
	from         int           // cow: the shared block that was copied
	fromRef      int           // cow: its refcount before the copy
	copied       int           // cow: slots copied
	alternatives []alternative // the most likely tokens of the distribution it came from
	attention    []float64     // its attention weights over positions 0..pos (nil: off)
}

// alternative is one of the most likely tokens and its probability.
type alternative struct {
	id int
	p  float64
}

// stepSeed derives sequence n's sampling seed from --seed the way `kvref run -np` derives a
// continuation's, so sequence 0 samples exactly like `kvref run` with the same flags.
func stepSeed(seed uint64, n int) uint64 { return seed + uint64(n)*0x9e3779b97f4a7c15 }

// newStepper loads the model, builds the engine and runs the prompt's prefill.
func newStepper(o stepOptions, stdout, stderr io.Writer, color bool) (*stepper, error) {
	kType, vType, err := o.cache.types()
	if err != nil {
		return nil, err
	}
	m, err := loadModel(o.model, stderr)
	if err != nil {
		return nil, err
	}
	attn, err := parseAttention(o.attn, m.Config)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("--attn: %w", err)
	}
	eng, err := engine.New(m, engine.Config{BlockSize: o.blockSize, CacheBlocks: o.cacheBlocks, Threads: o.threads, KType: kType, VType: vType})
	if err != nil {
		m.Close()
		return nil, err
	}
	s := &stepper{m: m, eng: eng, out: stdout, color: color, sampling: o.sampling, top: o.top, attn: attn, seqs: map[int]*stepSeq{}}
	s.showHeader()
	if err := s.add(o.prompt); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// close stops the engine and closes the model.
func (s *stepper) close() {
	s.eng.Close()
	s.m.Close()
}

// prompt is the command prompt, naming the current sequence.
func (s *stepper) prompt() string { return fmt.Sprintf("seq %d>", s.cur.kv.ID()) }

// live returns the live sequences in id order.
func (s *stepper) live() []*stepSeq {
	out := make([]*stepSeq, 0, len(s.seqs))
	for _, q := range s.seqs {
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b *stepSeq) int { return a.kv.ID() - b.kv.ID() })
	return out
}

// lookup finds a live sequence by the number the user typed.
func (s *stepper) lookup(arg string) (*stepSeq, error) {
	id, err := strconv.Atoi(arg)
	if q, ok := s.seqs[id]; err == nil && ok {
		return q, nil
	}
	var ids []string
	for _, q := range s.live() {
		ids = append(ids, strconv.Itoa(q.kv.ID()))
	}
	return nil, fmt.Errorf("no sequence %q; the live ones are %s (seqs lists them)", arg, strings.Join(ids, ", "))
}

// newSampler gives q a sampler with the session's parameters and q's own seed.
func (s *stepper) newSampler(q *stepSeq) {
	p := s.sampling
	p.Seed = stepSeed(q.seed, int(q.reseeds))
	q.sampler = engine.NewSampler(p)
}

// add starts a sequence from a prompt: the cache supplies every full block of its prefix it
// already holds, one forward pass computes the rest, and the new sequence becomes current.
func (s *stepper) add(text string) error {
	ids := s.m.Tokenizer.Encode(text, true)
	if len(ids) == 0 {
		return fmt.Errorf("the prompt %q has no tokens (this tokenizer adds no BOS); give some text", text)
	}
	if len(ids) >= s.eng.Context {
		return fmt.Errorf("the prompt has %d tokens; the context holds %d and one more is needed to decode", len(ids), s.eng.Context)
	}
	pool := s.eng.Pool
	before := pool.Blocks()
	kv := pool.AddSequence(ids)
	hit := kv.Computed()
	logits, err := s.eng.Step([]*kvcache.Sequence{kv})
	if err != nil {
		pool.Free(kv)
		if errors.Is(err, kvcache.ErrOutOfBlocks) {
			return fmt.Errorf("%w (free a sequence with free N, or start again with more --cache-blocks)", err)
		}
		return fatalError{err}
	}
	q := &stepSeq{kv: kv, seed: stepSeed(s.sampling.Seed, kv.ID()), logits: slices.Clone(logits[0]), prompt: len(ids), parent: -1}
	s.newSampler(q)
	s.seqs[kv.ID()] = q
	s.cur = q
	s.showPrefill(q, text, hit, before)
	return nil
}

// next decodes k tokens of the current sequence, one forward pass each.
func (s *stepper) next(k int) error {
	for range k {
		if err := s.decode(-1); err != nil {
			return err
		}
	}
	return nil
}

// decode appends one token to the current sequence — forced when ≥ 0, else sampled from
// the logits the sequence holds — and computes it: the forward pass writes the token's K/V
// into its slot and gives the logits of the token after it. Sampling a token and computing
// it happen in one command so that the display can say where the token's K/V landed.
func (s *stepper) decode(forced int) error {
	q, pool := s.cur, s.eng.Pool
	kv := q.kv
	pos := kv.Len()
	if pos >= s.eng.Context {
		return fmt.Errorf("seq %d fills the whole context (%d tokens); fork it, add a new prompt, or free it", kv.ID(), s.eng.Context)
	}
	// Reserve the slot before choosing the token: an out-of-blocks error then changes
	// nothing, not even the sampler's random state.
	bs := pool.Config().BlockSize
	tableBefore := slices.Clone(kv.Table())
	blocksBefore := pool.Blocks()
	if err := pool.Reserve(kv, 1); err != nil {
		return fmt.Errorf("%w (free a sequence with free N, or start again with more --cache-blocks)", err)
	}
	d := decoded{seq: q, pos: pos, token: forced, how: "picked"}
	if forced < 0 {
		d.token = q.sampler.Sample(q.logits)
		d.how = "sampled"
		if s.sampling.Greedy() {
			d.how = "greedy"
		}
	}
	probs := probabilities(q.logits)
	d.p = probs[d.token]
	d.rank = rankOf(q.logits, d.token)
	if s.top > 0 {
		for _, t := range topK(q.logits, s.top) {
			d.alternatives = append(d.alternatives, alternative{int(t[0]), probs[int(t[0])]})
		}
	}
	d.block, d.slot = kv.Slot(pos)
	switch i := pos / bs; {
	case i >= len(tableBefore):
		d.event = "new"
	case tableBefore[i] != d.block:
		d.event = "cow"
		d.from, d.fromRef, d.copied = tableBefore[i], blocksBefore[tableBefore[i]].Ref, pos-i*bs
	}
	d.evicted = d.event != "" && blocksBefore[d.block].Cached
	kv.Append(d.token)
	if s.attn.layer >= 0 {
		s.probeHeads = map[int][]float32{}
		s.eng.Runner.SetAttentionProbe(s.probe)
	}
	logits, err := s.eng.Step([]*kvcache.Sequence{kv})
	s.eng.Runner.SetAttentionProbe(nil)
	if err != nil {
		return fatalError{err}
	}
	q.logits = slices.Clone(logits[0])
	if len(s.probeHeads) > 0 {
		// The mean over heads, summed in head order whatever order the threads ran in.
		d.attention = make([]float64, pos+1)
		for _, h := range slices.Sorted(maps.Keys(s.probeHeads)) {
			for i, w := range s.probeHeads[h] {
				d.attention[i] += float64(w)
			}
		}
		for i := range d.attention {
			d.attention[i] /= float64(len(s.probeHeads))
		}
	}
	s.probeHeads = nil
	s.showDecoded(d)
	return nil
}

// probe receives attention weights during a decode step's forward pass (one row: the new
// token) and sums those of the chosen layer and head(s).
func (s *stepper) probe(layer, row, head int, weights []float32) {
	if layer != s.attn.layer || (s.attn.head >= 0 && head != s.attn.head) {
		return
	}
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	s.probeHeads[head] = slices.Clone(weights)
}

// fork starts a sibling of the current sequence sharing every block (each block's
// refcount goes up by one, nothing is copied) and the logits it holds, and switches to it.
// The sibling samples with its own seed.
func (s *stepper) fork() error {
	parent := s.cur
	kv := s.eng.Pool.Fork(parent.kv)
	q := &stepSeq{kv: kv, seed: stepSeed(s.sampling.Seed, kv.ID()), logits: slices.Clone(parent.logits),
		prompt: parent.prompt, parent: parent.kv.ID()}
	s.newSampler(q)
	s.seqs[kv.ID()] = q
	s.cur = q
	s.showFork(parent, q)
	return nil
}

// switchTo makes q the current sequence.
func (s *stepper) switchTo(q *stepSeq) error {
	s.cur = q
	s.showSwitch(q)
	return nil
}

// free ends sequence q, which must not be the current one.
func (s *stepper) free(q *stepSeq) error {
	if q == s.cur {
		return fmt.Errorf("seq %d is the current sequence; switch to another one first (seqs lists them)", q.kv.ID())
	}
	table := slices.Clone(q.kv.Table())
	s.eng.Pool.Free(q.kv)
	delete(s.seqs, q.kv.ID())
	s.showFree(q, table)
	return nil
}

// setTemperature changes the temperature of every sequence and of those to come. Each
// sampler is rebuilt with a seed mixed from its sequence's seed and the number of rebuilds,
// so a session replays exactly.
func (s *stepper) setTemperature(t float64) {
	s.sampling.Temperature = t
	for _, q := range s.live() {
		q.reseeds++
		s.newSampler(q)
	}
	note := ""
	if t == 0 {
		note = " (greedy: always the most likely token)"
	}
	s.say("temp    %g for every sequence from now on%s", t, note)
}

// setAttention handles the attn command.
func (s *stepper) setAttention(arg string) error {
	a, err := parseAttention(arg, s.m.Config)
	if err != nil {
		return fmt.Errorf("attn: %w", err)
	}
	s.attn = a
	if a.layer < 0 {
		s.say("attn    off")
		return nil
	}
	s.say("attn    %s for each new token from now on", s.attnName())
	return nil
}

// parseAttention reads "", "off", "LAYER" or "LAYER:HEAD".
func parseAttention(arg string, c model.Config) (attnChoice, error) {
	if arg == "" || arg == "off" {
		return attnChoice{layer: -1, head: -1}, nil
	}
	layerText, headText, hasHead := strings.Cut(arg, ":")
	layer, err := strconv.Atoi(layerText)
	if err != nil || layer < 0 || layer >= c.Layers {
		return attnChoice{}, fmt.Errorf("want LAYER or LAYER:HEAD with a layer from 0 to %d, got %q", c.Layers-1, arg)
	}
	head := -1
	if hasHead {
		head, err = strconv.Atoi(headText)
		if err != nil || head < 0 || head >= c.Heads {
			return attnChoice{}, fmt.Errorf("want a head from 0 to %d after the colon, got %q", c.Heads-1, arg)
		}
	}
	return attnChoice{layer: layer, head: head}, nil
}
