package textview

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/kvcache"
)

// TestConsole: the commands move the current sequence as they say, print their records,
// and a refused command (freeing the current sequence, a decode the pool has no block for)
// changes nothing.
func TestConsole(t *testing.T) {
	t.Parallel()

	var out strings.Builder
	c := &Console{View: *newView(t, &out, 2, 3, false)}
	require.NoError(t, c.Add("hi")) // BOS h i: blocks 0 and 1
	first := c.Cur
	require.Contains(t, out.String(), `seq 0  prompt "hi": 3 tokens, 0 from the cache`)
	require.NoError(t, c.Exec("n")) // pos 3 fills block 1
	require.NoError(t, c.Exec("fork"))
	require.NotSame(t, first, c.Cur)
	require.Contains(t, out.String(), "(switch 0 goes back)")
	require.ErrorContains(t, c.Exec("free 1"), "is the current sequence")
	require.Len(t, c.Session.Live(), 2)
	require.NoError(t, c.Exec("switch 0"))
	require.Same(t, first, c.Cur)
	require.NoError(t, c.Exec("n 2")) // pos 4 takes block 2, the last free one; pos 5 fills it
	pool := c.Session.Engine().Pool()
	before, n := pool.Stats(), c.Cur.KV.Len()
	require.ErrorIs(t, c.Exec("n"), kvcache.ErrOutOfBlocks, "pos 6 needs a fourth block")
	require.Equal(t, before, pool.Stats())
	require.Equal(t, n, c.Cur.KV.Len())
	require.NoError(t, c.Session.Engine().Pool().Check())
}
