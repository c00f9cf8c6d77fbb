package golden

import (
	"fmt"
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

// lazyModel is a synthetic model built once per test binary.
type lazyModel struct {
	shape synth.Shape
	once  sync.Once
	m     *model.Model
	err   error
}

func (l *lazyModel) get(t testing.TB) *model.Model {
	t.Helper()
	l.once.Do(func() { l.m, l.err = l.shape.Model() })
	require.NoError(t, l.err)
	return l.m
}

var (
	tinyModel = &lazyModel{shape: synth.Tiny}

	recordMu sync.Mutex
	recorded = map[string]*Golden{}
)

// tiny returns the synthetic tiny model, loaded once.
func tiny(t testing.TB) *model.Model { return tinyModel.get(t) }

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
	return recordOnce(t, tiny(t), tinySuite(t), name)
}

// recordOnce records (once per test binary and model) the named scenario of scs on m,
// checked against the cache-free reference.
func recordOnce(t testing.TB, m *model.Model, scs []*Scenario, name string) *Golden {
	t.Helper()
	recordMu.Lock()
	defer recordMu.Unlock()
	key := fmt.Sprintf("%p/%s", m, name)
	if g := recorded[key]; g != nil {
		return g
	}
	for _, sc := range scs {
		if sc.Name == name {
			g, err := Record(m, tinyInfo(m), sc, RecordOptions{Check: true, Threads: 1})
			require.NoError(t, err, name)
			recorded[key] = g
			return g
		}
	}
	require.FailNowf(t, "no such scenario", "no scenario %s among the %d given", name, len(scs))
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
