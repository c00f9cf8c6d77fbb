package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/repl"
	"github.com/kvref/kvref/internal/term"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/kvcache"
)

// writeScript writes a step script, one command per line, and returns its path.
func writeScript(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.txt")
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	return p
}

// startStepper parses args like `kvref step` and returns the stepper after its prefill,
// with everything it printed going to out.
func startStepper(t *testing.T, out io.Writer, args ...string) *stepTerm {
	t.Helper()
	o, err := parseStepFlags(args, io.Discard)
	require.NoError(t, err)
	s, err := newStepTerm(o, out, io.Discard, false)
	require.NoError(t, err)
	t.Cleanup(s.close)
	return s
}

var (
	reKV       = regexp.MustCompile(`^  K/V +pos (\d+) → block (\d+), slot (\d+)(.*)$`)
	reToken    = regexp.MustCompile(`^  token +(.+)  id (\d+)  p ([0-9.]+)  rank (\d+) of (\d+)  \((sampled at temp [0-9.]+|greedy|picked)\)$`)
	reTable    = regexp.MustCompile(`^  table +\[([\d ]*)\]`)
	reCache    = regexp.MustCompile(`^  cache +(\d+) used(?: \((\d+) shared\))? · (\d+) cached · (\d+) free of (\d+) blocks · (\d+) tokens in (\d+) slots$`)
	reBytes    = regexp.MustCompile(`^  bytes +(\d+) in use = (\d+) blocks? × (\d+) slots × (\d+) B per token \(2 · (\d+) layers · (\d+) KV heads · (\d+) head_dim · (\d+) B\)$`)
	reCoW      = regexp.MustCompile(`^ +block (\d+) was shared \(refcount (\d+)\), so its (\d+) filled slots? (?:was|were) first copied into new block (\d+);$`)
	reNewBlock = regexp.MustCompile(`: new block (\d+) \(`)
	reRefs     = regexp.MustCompile(`^  refs +block:refcount (.*)$`)
	rePrompt   = regexp.MustCompile(`^ {4,}(\d+) +(\d+)  (.+?) +(\d+) +(\d+)(  from the cache)?$`)
	rePrefix   = regexp.MustCompile(`^  prefix +hit: the first (\d+) tokens' K/V are reused`)
	reGridRow  = regexp.MustCompile(`^ {10} *(\d+) ((?:  [.c1-9+])+)$`)
	reFreeRows = regexp.MustCompile(`^ +… +blocks (\d+)-(\d+): free$`)
	reBlockRow = regexp.MustCompile(`^ +(\d+) +(\d+)/(\d+) +(\d+)  ((?:seq \d+\[\d+\] ?)*) *([0-9a-f]{12})?$`)
	reAttn     = regexp.MustCompile(`^  attn +layer (\d+), (?:mean of \d+ heads|head \d+): pos (\d+) attends over pos 0-(\d+) \(█ = ([0-9.]+)\)$`)
	reBars     = regexp.MustCompile(`^ {10}([▁▂▃▄▅▆▇█]+)$`)
)

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

func ints(t *testing.T, s string) []int {
	t.Helper()
	out := []int{}
	for _, f := range strings.Fields(s) {
		out = append(out, atoi(t, f))
	}
	return out
}

// cacheChecker compares what a stepper printed with the pool's state, recomputed here from
// Pool.Blocks(), the sequences' tables and the model's shape — not from the stepper.
type cacheChecker struct {
	t         *testing.T
	s         *stepTerm
	cow       int64 // copy-on-write copies counted so far
	evictions int64 // evictions counted so far
	evicted   int   // eviction lines seen
	hits      int64 // prefix-hit tokens so far
	decodes   map[int]int
	cows      int
	newBlock  int
	bars      int
	totals    int // cache and bytes lines checked against the pool
	grids     int // blocks views checked
	forks     int // forks checked
	prefills  int // prefills (add) checked
}

// bytesPerToken is 2 · layers · kv_heads · head_dim · 4 B for the f32 cache, from the model.
func (c *cacheChecker) bytesPerToken() int64 {
	m := c.s.eng().Model().Config
	return int64(2 * m.Layers * m.KVHeads * m.HeadDim * 4)
}

// check verifies one command's output (its echo line included).
func (c *cacheChecker) check(cmd, chunk string) {
	t, pool := c.t, c.s.eng().Pool()
	bs := pool.Config().BlockSize
	cur := c.s.Cur.KV
	blocks := pool.Blocks()
	lines := strings.Split(strings.TrimSuffix(chunk, "\n"), "\n")
	for _, l := range lines {
		require.Equal(t, strings.TrimRight(l, " "), l, "trailing space")
		require.NotContains(t, l, "\x1b", "colour in script output")
	}

	// Decode steps: every K/V line names the slot the sequence's own table gives.
	var kvLines, tokenLines, cowLines [][]string
	lastCache, lastBytes, lastTable := -1, -1, -1
	for i, l := range lines {
		if m := reKV.FindStringSubmatch(l); m != nil {
			kvLines = append(kvLines, m)
			if n := reNewBlock.FindStringSubmatch(m[4]); n != nil {
				c.newBlock++
				require.Equal(t, atoi(t, m[2]), atoi(t, n[1]), l)
				require.Zero(t, atoi(t, m[1])%bs, "a new block starts at slot 0: %s", l)
			}
		}
		if m := reToken.FindStringSubmatch(l); m != nil {
			tokenLines = append(tokenLines, m)
		}
		if m := reCoW.FindStringSubmatch(l); m != nil {
			cowLines = append(cowLines, m)
		}
		if m := reBytes.FindStringSubmatch(l); m != nil {
			lastBytes = i
			// Every bytes line is the formula itself, with the model's own numbers.
			mc := c.s.eng().Model().Config
			require.Equal(t, []int{mc.Layers, mc.KVHeads, mc.HeadDim, 4}, []int{atoi(t, m[5]), atoi(t, m[6]), atoi(t, m[7]), atoi(t, m[8])}, l)
			require.Equal(t, c.bytesPerToken(), int64(atoi(t, m[4])), l)
			require.Equal(t, bs, atoi(t, m[3]), l)
			require.Equal(t, int64(atoi(t, m[2])*atoi(t, m[3]))*c.bytesPerToken(), int64(atoi(t, m[1])), l)
		}
		if reCache.MatchString(l) {
			lastCache = i
		}
		if reTable.MatchString(l) {
			lastTable = i
		}
	}
	require.Len(t, tokenLines, len(kvLines))
	if len(kvLines) > 0 {
		first := atoi(t, kvLines[0][1])
		require.Equal(t, cur.Len()-len(kvLines), first, "the first decoded position of %q", cmd)
		for k, m := range kvLines {
			pos, block, slot := atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[3])
			require.Equal(t, first+k, pos)
			require.Equal(t, cur.Table()[pos/bs], block, "block of pos %d", pos)
			require.Equal(t, pos%bs, slot, "slot of pos %d", pos)
			require.Equal(t, cur.Tokens()[pos], atoi(t, tokenLines[k][2]), "token at pos %d", pos)
		}
		require.Equal(t, cur.Len(), cur.Computed(), "every decoded token is computed")
		c.decodes[cur.ID()] += len(kvLines)
	}
	st := pool.Stats()
	require.Equal(t, int(st.CowCopies-c.cow), len(cowLines), "copy-on-write lines of %q", cmd)
	for _, m := range cowLines {
		from, ref, copied, to := atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[3]), atoi(t, m[4])
		require.Equal(t, 2, ref)
		require.Equal(t, 1, blocks[from].Ref, "the copied block lost the writer's reference")
		require.Contains(t, cur.Table(), to)
		require.NotContains(t, cur.Table(), from)
		require.Equal(t, copied, atoi(t, kvLines[0][1])%bs, "slots copied = the slots before the write")
		c.cows++
	}
	c.cow = st.CowCopies
	evictions := strings.Count(chunk, "no block was free: block ")
	require.Equal(t, int(st.Evictions-c.evictions), evictions, "eviction lines of %q", cmd)
	c.evictions = st.Evictions
	c.evicted += evictions

	// The totals, recomputed from the blocks.
	if lastCache >= 0 {
		m := reCache.FindStringSubmatch(lines[lastCache])
		var used, shared, cached, free, stored int
		for _, b := range blocks {
			switch {
			case b.Ref > 0:
				used++
				stored += b.Filled
				if b.Ref > 1 {
					shared++
				}
			case b.Cached:
				cached++
			default:
				free++
			}
		}
		sharedPrinted := 0
		if m[2] != "" {
			sharedPrinted = atoi(t, m[2])
		}
		require.Equal(t, []int{used, shared, cached, free, len(blocks), stored, used * bs},
			[]int{atoi(t, m[1]), sharedPrinted, atoi(t, m[3]), atoi(t, m[4]), atoi(t, m[5]), atoi(t, m[6]), atoi(t, m[7])}, lines[lastCache])
		require.GreaterOrEqual(t, lastBytes, 0)
		b := reBytes.FindStringSubmatch(lines[lastBytes])
		require.Equal(t, int64(used*bs)*c.bytesPerToken(), int64(atoi(t, b[1])), lines[lastBytes])
		require.Equal(t, st.BytesInUse, int64(atoi(t, b[1])))
		require.Equal(t, used, atoi(t, b[2]))
		c.totals++
	}
	if lastTable >= 0 && !strings.HasPrefix(cmd, "add") {
		require.Equal(t, cur.Table(), ints(t, reTable.FindStringSubmatch(lines[lastTable])[1]), "table after %q", cmd)
	}

	// Attention: one bar per position 0..pos.
	for i, l := range lines {
		m := reAttn.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		pos := atoi(t, m[2])
		require.Equal(t, pos, atoi(t, m[3]))
		n := 0
		for _, b := range lines[i+1:] {
			if bm := reBars.FindStringSubmatch(b); bm != nil {
				n += len([]rune(bm[1]))
			} else if strings.HasPrefix(b, "          strongest") {
				break
			}
		}
		require.Equal(t, pos+1, n, "attention bars of pos %d", pos)
		c.bars++
	}

	switch fields := strings.Fields(cmd); {
	case len(fields) == 0:
	case fields[0] == "fork":
		c.checkFork(lines)
	case fields[0] == "blocks":
		c.checkBlocks(lines)
	case fields[0] == "add":
		c.checkPrefill(lines)
	}
}

// checkFork: the printed refcounts are the pool's, and every block is shared.
func (c *cacheChecker) checkFork(lines []string) {
	t, blocks := c.t, c.s.eng().Pool().Blocks()
	for _, l := range lines {
		m := reRefs.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		var ids []int
		for _, pair := range strings.Fields(m[1]) {
			id, ref, ok := strings.Cut(pair, ":")
			require.True(t, ok)
			require.Equal(t, blocks[atoi(t, id)].Ref, atoi(t, ref), "refcount of block %s", id)
			require.GreaterOrEqual(t, atoi(t, ref), 2)
			ids = append(ids, atoi(t, id))
		}
		require.Equal(t, c.s.Cur.KV.Table(), ids)
		c.forks++
		return
	}
	require.FailNow(t, "fork printed no refs line")
}

// checkBlocks: every grid cell and every row of the block table is the pool's.
func (c *cacheChecker) checkBlocks(lines []string) {
	t, blocks := c.t, c.s.eng().Pool().Blocks()
	owners := map[int][]string{}
	for _, q := range c.s.sess.Live() {
		for i, id := range q.KV.Table() {
			owners[id] = append(owners[id], fmt.Sprintf("seq %d[%d]", q.ID(), i))
		}
	}
	cells, rows := 0, 0
	for _, l := range lines {
		if m := reGridRow.FindStringSubmatch(l); m != nil {
			first := atoi(t, m[1])
			for k, g := range strings.Fields(m[2]) {
				b := blocks[first+k]
				want := "."
				switch {
				case b.Ref == 0 && b.Cached:
					want = "c"
				case b.Ref > 0:
					want = strconv.Itoa(b.Ref)
				}
				require.Equal(t, want, g, "grid cell of block %d", b.ID)
				cells++
			}
			continue
		}
		if m := reFreeRows.FindStringSubmatch(l); m != nil {
			for _, b := range blocks[atoi(t, m[1]) : atoi(t, m[2])+1] {
				require.True(t, b.Ref == 0 && !b.Cached, "block %d is free", b.ID)
				cells++
			}
			continue
		}
		if m := reBlockRow.FindStringSubmatch(l); m != nil {
			b := blocks[atoi(t, m[1])]
			require.Equal(t, b.Filled, atoi(t, m[2]), l)
			require.Equal(t, c.s.eng().Pool().Config().BlockSize, atoi(t, m[3]), l)
			require.Equal(t, b.Ref, atoi(t, m[4]), l)
			require.Equal(t, strings.Join(owners[b.ID], " "), strings.TrimSpace(m[5]), l)
			require.Equal(t, b.Hash, m[6], l)
			rows++
		}
	}
	require.Equal(t, len(blocks), cells, "every block has a cell")
	notFree := 0
	for _, b := range blocks {
		if b.Ref > 0 || b.Cached {
			notFree++
		}
	}
	require.Equal(t, notFree, rows, "every block in use or cached has a row")
	c.grids++
}

// checkPrefill: every prompt token's block and slot is the table's, and the prefix hit is
// what the pool counted.
func (c *cacheChecker) checkPrefill(lines []string) {
	t, pool := c.t, c.s.eng().Pool()
	kv, bs := c.s.Cur.KV, pool.Config().BlockSize
	hit, rows, fromCache := 0, 0, 0
	for _, l := range lines {
		if m := rePrefix.FindStringSubmatch(l); m != nil {
			hit = atoi(t, m[1])
		}
		if m := rePrompt.FindStringSubmatch(l); m != nil {
			pos := atoi(t, m[1])
			require.Equal(t, rows, pos)
			require.Equal(t, kv.Tokens()[pos], atoi(t, m[2]))
			require.Equal(t, c.s.TokenLabel(kv.Tokens()[pos]), m[3])
			require.Equal(t, kv.Table()[pos/bs], atoi(t, m[4]))
			require.Equal(t, pos%bs, atoi(t, m[5]))
			if m[6] != "" {
				fromCache++
			}
			rows++
		}
	}
	require.Equal(t, kv.Len(), rows, "one row per prompt token")
	require.Equal(t, hit, fromCache)
	st := pool.Stats()
	require.Equal(t, st.PrefixHitTokens-c.hits, int64(hit), "prefix hit")
	c.hits = st.PrefixHitTokens
	for i := range hit / bs {
		require.Greater(t, pool.Blocks()[kv.Table()[i]].Ref, 0)
	}
	c.prefills++
}

// TestStepScriptAgreesWithTheCache drives `kvref step --script` on stories260K through a
// prefill, 20 decode steps of one sequence, a fork and its copy-on-write, blocks views, a
// free and a prefix hit, and checks every number it printed against the pool itself.
func TestStepScriptAgreesWithTheCache(t *testing.T) {
	modelPath := testutil.Shared(t, "models/stories260K.gguf")
	script := writeScript(t,
		"# prompt: 5 tokens, blocks of 4: the prefill fills block 0 and one slot of block 1",
		"",         // Enter: pos 5
		"n 2",      // pos 6, 7: block 1 is full
		"n",        // pos 8: a new block
		"pick 400", // pos 9, forced
		"fork",     // seq 1 shares blocks 0-2
		"n",        // seq 1 writes pos 10 into shared block 2: copy-on-write
		"blocks",   //
		"switch 0", //
		"n 15",     // seq 0: pos 10-24 (20 decoded in all)
		"seqs",     //
		"free 1",   //
		"blocks",   //
		"top 3",    //
		"temp 0",   //
		"attn 1:3", //
		"n",        // seq 0: pos 25, greedy, head 3 of layer 1
		"add Once upon a time, there was a little", // a prefix hit on seq 0's full blocks
		"blocks",
		"quit",
		"n", // never runs
	)
	args := []string{"-m", modelPath, "-p", "Once upon a time", "--block-size", "4", "--cache-blocks", "16",
		"--attn", "2", "-t", "2", "--script", script}
	var out bytes.Buffer
	s := startStepper(t, &out, args...)
	c := &cacheChecker{t: t, s: s, decodes: map[int]int{}}
	c.check("add Once upon a time", out.String()) // the prefill is an add
	mark := out.Len()
	var cmds []string
	s.afterCommand = func(line string) {
		chunk := out.String()[mark:]
		mark = out.Len()
		cmds = append(cmds, line)
		c.check(line, chunk)
	}
	f, err := os.Open(script)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, s.repl().Run(f, script, false))

	require.Len(t, cmds, 19, "the script stops at quit")
	require.Equal(t, map[int]int{0: 21, 1: 1}, c.decodes)
	require.Equal(t, 1, c.cows, "exactly one copy-on-write: the fork's first write")
	require.Equal(t, 5, c.newBlock, "new blocks: pos 8 (seq 0), 12, 16, 20, 24")
	require.Equal(t, 22, c.bars, "an attention chart for every decoded token")
	require.Equal(t, 3, c.grids, "blocks views checked")
	require.Equal(t, 1, c.forks, "forks checked")
	require.Equal(t, 2, c.prefills, "prefills checked (the prompt and add)")
	require.Equal(t, 11, c.totals, "commands whose cache totals were checked: the prompt, 7 decoding ones, fork, free, add")
	require.Equal(t, []int{0, 2}, []int{s.sess.Live()[0].ID(), s.sess.Live()[1].ID()})
	require.Equal(t, 400, s.sess.Seq(0).KV.Tokens()[9], "pick forces the token")
	require.NoError(t, s.eng().Pool().Check())

	transcript := out.String()
	require.Contains(t, transcript, "seq 1> n\n")
	require.Contains(t, transcript, "copy-on-write")
	require.Contains(t, transcript, "1280 B per token = 2 · 5 layers · 4 KV heads · 8 head_dim · 4 B")
	require.Contains(t, transcript, "prefix  hit: the first 8 tokens' K/V are reused")

	// The command line prints exactly the same transcript, twice the same.
	for range 2 {
		cli, stderr, code := kvref(t, append([]string{"step"}, args...)...)
		require.Equal(t, 0, code, stderr)
		require.Equal(t, transcript, cli)
	}
}

// TestStepSamplesLikeRun: with the same flags, `kvref step` picks exactly the tokens of
// `kvref run` (sequence 0 uses --seed itself, as run's first continuation does).
func TestStepSamplesLikeRun(t *testing.T) {
	modelPath := testutil.Shared(t, "models/stories260K.gguf")
	for _, seed := range []string{"42", "7"} {
		out, stderr, code := kvref(t, "run", "-m", modelPath, "-p", "Once upon a time", "-n", "20", "--ignore-eos", "--json", "--seed", seed)
		require.Equal(t, 0, code, stderr)
		var want []int
		for _, tok := range parseJSONRun(t, out).Tokens {
			want = append(want, tok.ID)
		}
		out, stderr, code = kvref(t, "step", "-m", modelPath, "-p", "Once upon a time", "--seed", seed, "--script", writeScript(t, "n 20"))
		require.Equal(t, 0, code, stderr)
		var got []int
		for _, l := range strings.Split(out, "\n") {
			if m := reToken.FindStringSubmatch(l); m != nil {
				got = append(got, atoi(t, m[2]))
			}
		}
		require.Equal(t, want, got, "seed %s", seed)
	}
}

// TestStepCommandErrors: every command rejects bad input with a message saying what to
// do, and leaves the session as it was.
func TestStepCommandErrors(t *testing.T) {
	s := startStepper(t, io.Discard, "-p", "hello", "--block-size", "4", "--cache-blocks", "8")
	require.NoError(t, s.exec(`pick "h"`))
	require.Equal(t, 107, s.Cur.KV.Tokens()[s.Cur.KV.Len()-1], "pick by text")
	require.NoError(t, s.exec("pick <s>"))
	require.Equal(t, 1, s.Cur.KV.Tokens()[s.Cur.KV.Len()-1], "pick by vocabulary entry")
	require.NoError(t, s.exec("fork"))   // seq 1, current
	require.NoError(t, s.exec("n"))      // its copy-on-write
	require.NoError(t, s.exec("free 0")) // seq 0 was not current: allowed
	require.NoError(t, s.exec("fork"))   // seq 2, current; seq 1 lives
	for _, tc := range []struct{ cmd, want string }{
		{"bogus", `unknown command "bogus" (help lists the commands)`},
		{"switch 7", `no sequence "7"; the live ones are 1, 2`},
		{"switch x", `no sequence "x"`},
		{"switch 0", `no sequence "0"`}, // freed
		{"switch", "switch takes a sequence number"},
		{"free 2", "seq 2 is the current sequence; switch to another one first"},
		{"free 9", `no sequence "9"`},
		{"free 1 2", "free takes a sequence number"},
		{"pick -1", "pick takes a token id from 0 to 511 or a token's text in quotes"},
		{"pick 99999", "pick takes a token id from 0 to 511"},
		{`pick "xyz"`, `pick: no token is the text "xyz" (kvref tokenize`},
		{`pick "\q"`, "is not a valid quoted string"},
		{"pick", "pick takes a token id"},
		{"n 0", `n takes a number of tokens ≥ 1, got "0"`},
		{"n x", `n takes a number of tokens ≥ 1, got "x"`},
		{"n 1 2", "n takes at most one number"},
		{"fork 1", "fork takes no arguments"},
		{"top -1", "top takes a number from 0 to"},
		{"top many", "top takes a number from 0 to"},
		{"temp -1", "temp takes a number ≥ 0"},
		{"temp NaN", "temp takes a number ≥ 0"},
		{"attn 99", "attn: want LAYER or LAYER:HEAD with a layer from 0 to 4"},
		{"attn 0:99", "attn: want a head from 0 to 7 after the colon"},
		{"attn x", "attn: want LAYER"},
		{`add "unterminated`, ""}, // not quoted on both ends: plain text, fine
		{`add "bad \q"`, "is not a valid quoted string"},
		{"blocks 1", "blocks takes no arguments"},
		{"seqs 1", "seqs takes no arguments"},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			before := s.eng().Pool().Stats()
			cur, n := s.Cur, len(s.sess.Live())
			err := s.exec(tc.cmd)
			if tc.want == "" {
				require.NoError(t, err)
				require.NoError(t, s.exec("switch 2"))
				return
			}
			require.ErrorContains(t, err, tc.want)
			require.Same(t, cur, s.Cur)
			require.Len(t, s.sess.Live(), n)
			require.Equal(t, before, s.eng().Pool().Stats())
		})
	}
	var out bytes.Buffer
	s.Out = &out
	require.NoError(t, s.exec("top 0"))
	require.NoError(t, s.exec("n"))
	require.NotContains(t, out.String(), "  top 0 ", "top 0 hides the alternatives")
	require.ErrorIs(t, s.exec("quit"), repl.ErrQuit)
	require.NoError(t, s.eng().Pool().Check())
}

// TestStepOutOfBlocks: a decode that needs a block the pool does not have fails without
// changing anything, and says what to do.
func TestStepOutOfBlocks(t *testing.T) {
	// BOS + 3 bytes = 4 tokens in blocks of 2: the prompt takes both blocks.
	s := startStepper(t, io.Discard, "-p", "abc", "--block-size", "2", "--cache-blocks", "2")
	kv := s.Cur.KV
	require.Equal(t, 4, kv.Len())
	err := s.exec("n")
	require.ErrorIs(t, err, kvcache.ErrOutOfBlocks)
	require.ErrorContains(t, err, "free a sequence with free N, or start again with more --cache-blocks")
	require.Equal(t, 4, kv.Len(), "nothing appended")
	require.Equal(t, 4, kv.Computed())

	require.ErrorIs(t, s.exec("add xyz"), kvcache.ErrOutOfBlocks)
	require.Len(t, s.sess.Live(), 1, "the failed add left no sequence behind")
	require.NoError(t, s.eng().Pool().Check())
}

// TestStepContextFull: a sequence that fills the context cannot grow.
func TestStepContextFull(t *testing.T) {
	model := filepath.Join(t.TempDir(), "ctx8.gguf")
	_, stderr, code := kvref(t, "synth", "-o", model, "--ctx", "8", "--dim", "32", "--heads", "4", "--kv-heads", "2", "--layers", "1", "--hidden", "32")
	require.Equal(t, 0, code, stderr)
	s := startStepper(t, io.Discard, "-m", model, "-p", "abc", "--block-size", "4")
	require.NoError(t, s.exec("n 4"))
	require.ErrorContains(t, s.exec("n"), "seq 0 fills the whole context (8 tokens)")
	require.ErrorContains(t, s.exec("add 0123456789"), "the prompt has 11 tokens; the context holds 8")
}

// TestStepScriptStopsAtTheFirstError: a script's failing command ends the run with exit
// status 1 and names the line; the output so far is kept.
func TestStepScriptStopsAtTheFirstError(t *testing.T) {
	script := writeScript(t, "n", "# a comment", "free 0", "n")
	out, stderr, code := kvref(t, "step", "-p", "hi", "--script", script)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `script.txt:3: "free 0": seq 0 is the current sequence; switch to another one first`)
	require.Contains(t, out, "seq 0> n\n")
	require.Contains(t, out, "seq 0> free 0\n")
	require.Contains(t, out, "\n# a comment\nseq 0> free 0\n", "comments are echoed as they are")
	require.Equal(t, 1, strings.Count(out, "  K/V "), "the last n never ran")
}

// TestStepInteractive: on a terminal a failing command prints its error and the session
// goes on; quit and the end of the input both end it.
func TestStepInteractive(t *testing.T) {
	var out bytes.Buffer
	s := startStepper(t, &out, "-p", "hi")
	require.NoError(t, s.repl().Run(strings.NewReader("bogus\n\nhelp\nquit\nn\n"), "", true))
	got := out.String()
	require.Contains(t, got, `error: unknown command "bogus"`)
	require.Equal(t, 1, strings.Count(got, "  K/V "), "Enter decoded one token; nothing after quit")
	for _, cmd := range []string{"n [K]", `pick ID|"TEXT"`, "fork", "switch N", "free N", "add TEXT", "seqs", "blocks", "top K", "temp T", "attn L[:H]|off", "help", "quit"} {
		require.Contains(t, got, cmd, "help lists %s", cmd)
	}
	require.NoError(t, s.repl().Run(strings.NewReader("n"), "", true))
}

// TestStepFlags: bad flags are refused before anything is loaded; -h shows the commands.
func TestStepFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--block-size", "0"}, "--block-size must be ≥ 1"},
		{[]string{"--temp", "-1"}, "--temp must be a number ≥ 0"},
		{[]string{"--top", "-2"}, "--top must be ≥ 0"},
		{[]string{"--attn", "9"}, "--attn: want LAYER or LAYER:HEAD with a layer from 0 to 4"},
		{[]string{"--cache-dtype", "f64"}, "f64"},
		{[]string{"-p", "a", "b"}, `unexpected arguments ["b"]`},
		{[]string{"--script", "/nonexistent/script.txt"}, "no such file"},
	} {
		_, stderr, code := kvref(t, append([]string{"step"}, tc.args...)...)
		require.Equal(t, 1, code, "%v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.want, "%v", tc.args)
	}
	_, stderr, code := kvref(t, "step", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, stderr, "usage: kvref step")
	require.Contains(t, stderr, "fork            start a sibling")
}

// TestStepColours: colours only when asked (a terminal), never in scripts.
func TestStepColours(t *testing.T) {
	var out bytes.Buffer
	o, err := parseStepFlags([]string{"-p", "hi", "--block-size", "2"}, io.Discard)
	require.NoError(t, err)
	s, err := newStepTerm(o, &out, io.Discard, true)
	require.NoError(t, err)
	defer s.close()
	require.NoError(t, s.exec("n 3")) // pos 3-5: block 1 fills, block 2 is new
	require.Contains(t, out.String(), "\x1b[32mnew block")
	require.NoError(t, s.exec("pick 10"))
	require.NoError(t, s.exec("fork"))
	require.NoError(t, s.exec("n")) // pos 7: copy of shared block 3
	require.Contains(t, out.String(), "\x1b[33mcopy-on-write")
	require.False(t, term.IsTerminal(&out))

	plain, _, code := kvref(t, "step", "-p", "hi", "--block-size", "2", "--script", writeScript(t, "n 2", "fork", "n", "blocks"))
	require.Equal(t, 0, code)
	require.NotContains(t, plain, "\x1b")
	require.Contains(t, plain, "copy-on-write")
	require.True(t, slices.Contains(strings.Split(plain, "\n"), "seq 1> blocks"))
}

// TestStepUndoAndCheck: `kvref step --check` marks every computed step (the prefill and
// each decoded token) with a check line, and undo takes back free, a copy-on-write decode
// and fork: the blocks view is then what it was, the current sequence is seq 0 again, and
// the next token is the one a session without the detour samples.
func TestStepUndoAndCheck(t *testing.T) {
	modelPath := testutil.Shared(t, "models/stories260K.gguf")
	args := []string{"step", "-m", modelPath, "-p", "Once upon a time", "--block-size", "4", "--cache-blocks", "16", "--check", "--temp", "0.8", "--seed", "5", "--script"}
	detour, stderr, code := kvref(t, append(args, writeScript(t, "n 2", "blocks", "fork", "n", "switch 0", "free 1", "undo", "undo", "undo", "blocks", "n"))...)
	require.Equal(t, 0, code, stderr)
	straight, stderr, code := kvref(t, append(args, writeScript(t, "n 2", "blocks", "n"))...)
	require.Equal(t, 0, code, stderr)

	checks := regexp.MustCompile(`(?m)^  check   ✓ max \|Δ\| 0: pos (\d+)'s logits recomputed without the cache are bit-identical$`)
	var pos []string
	for _, m := range checks.FindAllStringSubmatch(detour, -1) {
		pos = append(pos, m[1])
	}
	require.Equal(t, []string{"4", "5", "6", "7", "7"}, pos, "the prefill, n 2, the fork's n and the last n: every computed step is marked")
	require.Contains(t, detour, `undo    took back "free 1"`)
	require.Contains(t, detour, `undo    took back "n"`)
	require.Contains(t, detour, `undo    took back "fork"`)
	require.Contains(t, detour, "seq 0> n\n", "seq 0 is current again after undoing the fork")

	// The blocks view after the undos is the one before the detour, and the last n decodes
	// what it decodes without the detour.
	section := func(out, from, to string) string {
		i := strings.Index(out, from)
		require.GreaterOrEqual(t, i, 0, from)
		j := strings.Index(out[i+len(from):], to)
		require.GreaterOrEqual(t, j, 0, to)
		return out[i+len(from) : i+len(from)+j]
	}
	first := section(detour, "seq 0> blocks\n", "seq 0> fork\n")
	again := detour[strings.LastIndex(detour, "seq 0> blocks\n"):]
	again = section(again, "seq 0> blocks\n", "seq 0> n\n")
	require.Equal(t, first, again)
	tail := func(out string) string { return out[strings.LastIndex(out, "seq 0> n\n"):] }
	require.Equal(t, tail(straight), tail(detour))
}
