package golden

import (
	"fmt"

	"github.com/kvref/kvref/model"
)

// SelfOptions are the cache overrides of a replay of kvref itself (kvref verify --self).
type SelfOptions struct {
	BlockSize int // > 0: replay with this block size instead of the golden's
	Blocks    int // > 0: replay with this pool size
	Chunk     int // ≥ 0: replay with this prefill chunk size (0: none); < 0: the golden's
	Threads   int
	TopK      int // log-probabilities per step (0: the golden's)
}

// ReplaySelf runs every golden's scenario through kvref again with the overrides, and
// returns the results as one candidate, named after the version and the overrides.
func ReplaySelf(m *model.Model, goldens []*Golden, o SelfOptions) (*Candidate, error) {
	c := NewCandidate(fmt.Sprintf("%s replay (block size %s, blocks %s, chunk %s)", Version(),
		orGolden(o.BlockSize, 0), orGolden(o.Blocks, 0), orGolden(o.Chunk, -1)))
	for _, g := range goldens {
		cache := g.Scenario.Cache
		if o.BlockSize > 0 {
			cache.BlockSize = o.BlockSize
		}
		if o.Blocks > 0 {
			cache.Blocks = o.Blocks
		}
		if o.Chunk >= 0 {
			cache.ChunkSize = o.Chunk
		}
		cs, err := Replay(m, g, ReplayOptions{Cache: &cache, Threads: o.Threads, TopK: o.TopK})
		if err != nil {
			return nil, err
		}
		c.Scenarios[g.Scenario.Name] = cs
	}
	return c, nil
}

// orGolden describes an override: its value, or "as golden" when it is unset.
func orGolden(v, unset int) string {
	if v == unset {
		return "as golden"
	}
	return fmt.Sprint(v)
}
