package textview

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model/builtin"
	"github.com/kvref/kvref/stepper"
)

// stories loads the embedded stories260K once.
var stories = sync.OnceValues(builtin.Model)

// newView starts a greedy session on stories260K with blocks of blockSize slots and returns
// a view printing into out.
func newView(t *testing.T, out *strings.Builder, blockSize, blocks int, color bool) *View {
	t.Helper()
	m, err := stories()
	require.NoError(t, err)
	sess, err := stepper.New(m, engine.Config{BlockSize: blockSize, CacheBlocks: blocks, Threads: 1}, stepper.Options{})
	require.NoError(t, err)
	t.Cleanup(sess.Close)
	return &View{Session: sess, Out: out, Color: color, Top: 3}
}

// TestColoursOnlyWhenAsked: a new block is green and a copy-on-write yellow with Color,
// and no escape sequence is written without it; no line ends in a space either way.
func TestColoursOnlyWhenAsked(t *testing.T) {
	t.Parallel()

	for _, color := range []bool{true, false} {
		var out strings.Builder
		v := newView(t, &out, 2, 16, color)
		s := v.Session
		a, err := s.Add(s.Model().Tokenizer.Encode("hi", true)) // BOS h i: 3 tokens
		require.NoError(t, err)
		v.Added(a, "hi")
		d, err := s.Decode(a.Seq, -1, v.Top) // pos 3 fills block 1
		require.NoError(t, err)
		v.Decoded(d)
		d, err = s.Decode(a.Seq, -1, v.Top) // pos 4: a new block
		require.NoError(t, err)
		v.Decoded(d)
		f := s.Fork(a.Seq)
		v.Forked(a.Seq, f.Seq, "")
		d, err = s.Decode(f.Seq, -1, v.Top) // pos 5 into the shared block 2: copy-on-write
		require.NoError(t, err)
		v.Decoded(d)
		v.Blocks()
		got := out.String()
		require.Contains(t, got, "copy-on-write")
		require.Equal(t, color, strings.Contains(got, "\x1b[32mnew block 2"), "new block in green")
		require.Equal(t, color, strings.Contains(got, "\x1b[33mcopy-on-write"), "copy-on-write in yellow")
		if !color {
			require.NotContains(t, got, "\x1b")
		}
		for _, l := range strings.Split(got, "\n") {
			require.Equal(t, strings.TrimRight(l, " "), l, "trailing space")
		}
		require.Contains(t, got, "now     on seq 1, which samples with its own seed\n", "no hint without one")
	}
}

// TestBlocksAgreeWithThePool: every grid row of Blocks draws the pool's blocks (shared,
// cached and free ones among them), and the bytes line is the formula 2 · layers · KV heads · head_dim · 4 B with the model's numbers.
func TestBlocksAgreeWithThePool(t *testing.T) {
	t.Parallel()

	var out strings.Builder
	v := newView(t, &out, 4, 30, false)
	s := v.Session
	tok := s.Model().Tokenizer
	a, err := s.Add(tok.Encode("Once upon a time", true))
	require.NoError(t, err)
	for range 6 {
		_, err := s.Decode(a.Seq, -1, 0)
		require.NoError(t, err)
	}
	b, err := s.Add(tok.Encode("Once upon a time, there", true)) // a prefix hit on a's first block
	require.NoError(t, err)
	require.Positive(t, b.Hit)
	s.Free(a.Seq)                                               // its full blocks that b does not hold stay cached
	_, err = s.Add(tok.Encode("Once upon a time, there", true)) // shares b's first block
	require.NoError(t, err)
	out.Reset()
	v.Blocks()
	// 30 blocks: three rows of ten, none of them summed up (only a second free row in a
	// row is), each cell the block's refcount, "c" when cached without owner, "." when free.
	blocks := s.Engine().Pool().Blocks()
	require.Len(t, blocks, 30)
	for row := 0; row < 30; row += 10 {
		want := fmt.Sprintf("%10s%2d ", "", row)
		for _, b := range blocks[row : row+10] {
			glyph := "."
			if b.Ref > 0 {
				glyph = fmt.Sprint(b.Ref)
			} else if b.Cached {
				glyph = "c"
			}
			want += "  " + glyph
		}
		require.Contains(t, out.String(), "\n"+want+"\n", "grid row %d", row)
	}
	require.Equal(t, 2, blocks[0].Ref, "two prefix hits share block 0")
	require.True(t, slices.ContainsFunc(blocks, func(b kvcache.BlockState) bool { return b.Ref == 0 && b.Cached }), "a cached block is drawn")

	c := s.Model().Config
	require.Equal(t, fmt.Sprintf("2 · %d layers · %d KV heads · %d head_dim · 4 B", c.Layers, c.KVHeads, c.HeadDim),
		TokenFormula(s.Engine().Pool().Config()))
	require.Equal(t, int64(2*c.Layers*c.KVHeads*c.HeadDim*4), s.Engine().Pool().Config().BytesPerToken())
}
