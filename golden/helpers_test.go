package golden

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model"
	"github.com/kvref/kvref/model/synth"
	"github.com/kvref/kvref/quant"
)

// tinyParams size the built-in scenarios for synth.Tiny (context 256): blocks of 4 tokens,
// a pool of 48 blocks (192 tokens).
var tinyParams = Params{BlockSize: 4, Blocks: 48, Context: 256}

var (
	tinyOnce  sync.Once
	tinyModel *model.Model
	tinyErr   error

	recordMu sync.Mutex
	recorded = map[string]*Golden{}
)

// tiny returns the synthetic tiny model, loaded once.
func tiny(t testing.TB) *model.Model {
	t.Helper()
	tinyOnce.Do(func() { tinyModel, tinyErr = synth.Tiny.Model() })
	require.NoError(t, tinyErr)
	return tinyModel
}

func tinyInfo(m *model.Model) ModelInfo {
	return ModelInfo{Path: m.Source, SHA256: "tiny", Source: m.Source, Vocab: m.Config.Vocab, Context: m.Config.Context, BOS: m.Tokenizer.BOS(), EOS: m.Tokenizer.EOS()}
}

// tinySuite returns the default suite for the tiny model.
func tinySuite(t testing.TB) []*Scenario {
	t.Helper()
	m := tiny(t)
	p := tinyParams
	p.Supports = func(c quant.CacheType) bool { return c.Validate(m.Config.KVHeads, m.Config.HeadDim) == nil }
	scs, _, err := Suite("default", p)
	require.NoError(t, err)
	return scs
}

// tinyGolden records (once per test binary) the named scenario of the tiny default suite.
func tinyGolden(t testing.TB, name string) *Golden {
	t.Helper()
	recordMu.Lock()
	defer recordMu.Unlock()
	if g := recorded[name]; g != nil {
		return g
	}
	m := tiny(t)
	for _, sc := range tinySuite(t) {
		if sc.Name == name {
			g, err := Record(m, tinyInfo(m), sc, RecordOptions{Check: true, Threads: 1})
			require.NoError(t, err)
			recorded[name] = g
			return g
		}
	}
	t.Fatalf("no scenario %s in the tiny default suite", name)
	return nil
}

// selfCandidate replays goldens through kvref and returns the candidate.
func selfCandidate(t testing.TB, goldens ...*Golden) *Candidate {
	t.Helper()
	c := NewCandidate("kvref replay")
	for _, g := range goldens {
		cs, err := Replay(tiny(t), g, ReplayOptions{Threads: 1})
		require.NoError(t, err)
		c.Scenarios[g.Scenario.Name] = cs
	}
	return c
}

// oracle returns a teacher-forcing oracle on the tiny model.
func oracle(t testing.TB) Oracle {
	t.Helper()
	r := model.NewRunner(tiny(t), 1)
	t.Cleanup(r.Close)
	return ModelOracle{Runner: r}
}

// kinds returns the failure kinds of a scenario report.
func kinds(rep *ScenarioReport) []string {
	var out []string
	for _, f := range rep.Failures {
		out = append(out, f.Kind)
	}
	return out
}
