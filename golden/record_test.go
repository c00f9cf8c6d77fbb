package golden

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/format/safetensors"
	"github.com/kvref/kvref/quant"
)

// TestRecordTinyDefaultSuite records every scenario of the default suite on the tiny
// model (with the bitwise reference check) and checks that each did what its class says:
// expectations met, evictions, preemptions, forks, cancellations, stops mid-block.
func TestRecordTinyDefaultSuite(t *testing.T) {
	for _, sc := range tinySuite(t) {
		g := tinyGolden(t, sc.Name)
		require.Equal(t, GoldenFormat, g.Format)
		require.Equal(t, len(sc.Requests()), len(g.Requests))
		for _, r := range g.Requests {
			require.Len(t, r.Choices, r.N, "%s %s", sc.Name, r.ID)
			for _, c := range r.Choices {
				for i, s := range c.Steps {
					require.Equal(t, c.OutputIDs[i], s.ID)
					require.Len(t, s.Top, g.TopK)
					require.LessOrEqual(t, s.Logprob, s.Top[0].Logprob)
					require.InDelta(t, s.Top[0].Logprob-s.Top[1].Logprob, s.Margin, 1e-12)
				}
			}
		}
		byID := map[string]*GoldenRequest{}
		for i := range g.Requests {
			byID[g.Requests[i].ID] = &g.Requests[i]
		}
		switch sc.Class {
		case "evict-then-rerequest":
			require.Positive(t, g.Stats.Evictions)
			require.Zero(t, byID["A1"].CachedTokens, "evicted")
			require.Positive(t, byID["A2"].CachedTokens, "cached again")
			require.Zero(t, byID["A3"].CachedTokens, "evicted again")
		case "preempt-recompute":
			require.Positive(t, g.Stats.Preemptions)
		case "fork-partial-block":
			require.Positive(t, g.Stats.CowCopies)
			a := byID["A"]
			require.Len(t, a.Choices, 4)
			require.NotEqual(t, a.Choices[0].OutputIDs, a.Choices[1].OutputIDs, "seeded sampling diverges")
			require.Equal(t, append(append([]int{}, byID["C"].PromptIDs...), a.Choices[2].OutputIDs[:tinyParams.BlockSize]...), byID["B"].PromptIDs)
		case "cancel-mid-decode":
			require.True(t, byID["A"].Cancelled)
			require.Len(t, byID["A"].Choices[0].OutputIDs, tinyParams.BlockSize+2)
		case "cancel-mid-prefill":
			require.True(t, byID["A"].Cancelled)
			require.Empty(t, byID["A"].Choices[0].OutputIDs)
		case "stop-mid-block":
			a := byID["A"]
			require.Len(t, a.Stop, 1)
			require.Equal(t, "stop", a.Choices[0].FinishReason)
			require.NotZero(t, (len(a.PromptIDs)+len(a.Choices[0].OutputIDs))%tinyParams.BlockSize, "the stop ends mid-block")
			require.Equal(t, a.Choices[0].OutputIDs, byID["C"].Choices[0].OutputIDs)
		case "identical-requests":
			for _, id := range []string{"B", "C", "D", "E"} {
				require.Equal(t, byID["A"].Choices[0].OutputIDs, byID[id].Choices[0].OutputIDs)
			}
		}
	}
}

// TestRecordIsDeterministic writes the same goldens twice, byte for byte.
func TestRecordIsDeterministic(t *testing.T) {
	m := tiny(t)
	sc := tinySuite(t)[0]
	var dirs []string
	for range 2 {
		g, err := Record(m, tinyInfo(m), sc, RecordOptions{Version: "test"})
		require.NoError(t, err)
		dir := t.TempDir()
		require.NoError(t, WriteDir(dir, &Manifest{Suite: "default", Params: tinyParams, TopK: g.TopK}, []*Golden{g}))
		dirs = append(dirs, dir)
	}
	for _, f := range []string{ManifestFile, sc.Name + ".json"} {
		a, err := os.ReadFile(filepath.Join(dirs[0], f))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(dirs[1], f))
		require.NoError(t, err)
		require.Equal(t, a, b, f)
	}
	man, goldens, err := ReadDir(dirs[0])
	require.NoError(t, err)
	require.Equal(t, ManifestFormat, man.Format)
	require.Len(t, goldens, 1)
	require.Equal(t, "test", goldens[0].KvrefVersion)
	require.Equal(t, sc.Name, goldens[0].Scenario.Name)
}

// TestReplayIsBitIdenticalAcrossCacheConfigurations is kvref's numeric contract seen
// through the golden files: replaying a scenario with another block size, pool or chunk
// size gives exactly the golden's steps.
func TestReplayIsBitIdenticalAcrossCacheConfigurations(t *testing.T) {
	for _, name := range []string{"mixed-hits-misses.f16", "chunked-prefill-shared.f32", "fork-partial-block.f32", "preempt-recompute.f32"} {
		g := tinyGolden(t, name)
		for _, cache := range []Cache{
			{BlockSize: 1, Blocks: 400, ChunkSize: 3},
			{BlockSize: 7, Blocks: 64},
			{BlockSize: 16, Blocks: 30, ChunkSize: 5, MaxBatchTokens: 40},
		} {
			cache.TypeK, cache.TypeV = g.Scenario.Cache.TypeK, g.Scenario.Cache.TypeV
			cs, err := Replay(tiny(t), g, ReplayOptions{Cache: &cache, Threads: 1})
			require.NoError(t, err, "%s %+v", name, cache)
			for _, r := range g.Requests {
				cr := cs.Requests[r.ID]
				require.NotNil(t, cr)
				for ci, c := range r.Choices {
					if r.Cancelled {
						continue // cancellation points depend on the schedule
					}
					require.Len(t, cr.Choices[ci], len(c.Steps), "%s %s", name, r.ID)
					for i, s := range c.Steps {
						st := cr.Choices[ci][i]
						require.Equal(t, s.ID, st.ID)
						require.Equal(t, s.Top, st.Top)
						require.Equal(t, s.Logprob, *st.Logprob)
					}
				}
			}
		}
	}
}

// TestQuantizedGoldenMeasuresItsError: a quantized cache records its measured error
// against f32, an f32 cache records none.
func TestQuantizedGoldenMeasuresItsError(t *testing.T) {
	f32 := tinyGolden(t, "mixed-hits-misses.f32")
	require.Zero(t, f32.Tolerance.QuantizationError)
	require.Equal(t, DefaultTolerance().Logprob, f32.Tolerance.Logprob)
	require.Contains(t, f32.Tolerance.Policy, "teacher-forced")
	for _, typ := range []quant.CacheType{quant.F16, quant.FP8E5M2} {
		g := tinyGolden(t, "mixed-hits-misses."+typ.String())
		require.Positive(t, g.Tolerance.QuantizationError, typ)
		require.Contains(t, g.Tolerance.Policy, "quantized reference cache")
	}
	require.Less(t, tinyGolden(t, "mixed-hits-misses.f16").Tolerance.QuantizationError,
		tinyGolden(t, "mixed-hits-misses.fp8-e5m2").Tolerance.QuantizationError, "f16 is closer to f32 than fp8-e5m2")
}

// TestRecordFailsWhenAScenarioDoesNotExerciseItsClass: a pool too large to evict makes the
// eviction scenario's expectations fail at record time, with the reason.
func TestRecordFailsWhenAScenarioDoesNotExerciseItsClass(t *testing.T) {
	m := tiny(t)
	var sc *Scenario
	for _, s := range tinySuite(t) {
		if s.Class == "evict-then-rerequest" {
			sc = s
		}
	}
	big := *sc
	big.Cache.Blocks = 2000
	_, err := Record(m, tinyInfo(m), &big, RecordOptions{})
	require.ErrorContains(t, err, "expects a cache miss but kvref's own run reused")

	wrong := *sc
	wrong.Model = &ModelRef{SHA256: "abc"}
	_, err = Record(m, tinyInfo(m), &wrong, RecordOptions{})
	require.ErrorContains(t, err, "was written for the model with SHA-256 abc")
}

// TestFullLogitsAreSafetensors writes full logits and reads them back with the
// safetensors reader: one [steps, vocab] F32 tensor per continuation, consistent with the
// recorded top-k.
func TestFullLogitsAreSafetensors(t *testing.T) {
	m := tiny(t)
	var sc *Scenario
	for _, s := range tinySuite(t) {
		if s.Class == "fork-partial-block" {
			sc = s
		}
	}
	g, err := Record(m, tinyInfo(m), sc, RecordOptions{FullLogits: true})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, WriteDir(dir, &Manifest{}, []*Golden{g}))
	require.Equal(t, sc.Name+".logits.safetensors", g.FullLogits)
	f, err := safetensors.Open(filepath.Join(dir, g.FullLogits))
	require.NoError(t, err)
	defer f.Close()
	require.Equal(t, sc.Name, f.Metadata["scenario"])
	for _, r := range g.Requests {
		for _, c := range r.Choices {
			info, ok := f.Tensor(fmt.Sprintf("%s/%d", r.ID, c.Index))
			require.True(t, ok, "%s/%d", r.ID, c.Index)
			require.Equal(t, safetensors.F32, info.DType)
			require.Equal(t, []int{len(c.Steps), m.Config.Vocab}, info.Shape)
			data, err := f.TensorData(info.Name)
			require.NoError(t, err)
			for i, s := range c.Steps {
				row := make([]float32, m.Config.Vocab)
				for j := range row {
					row[j] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*(i*m.Config.Vocab+j):]))
				}
				require.Equal(t, s, newStep(row, s.ID, g.TopK))
			}
		}
	}
	// Without --full-logits nothing extra is written.
	plain := *g
	plain.logits, plain.FullLogits = nil, ""
	dir2 := t.TempDir()
	require.NoError(t, WriteDir(dir2, &Manifest{}, []*Golden{&plain}))
	entries, err := os.ReadDir(dir2)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	require.False(t, bytes.Contains(mustRead(t, filepath.Join(dir2, sc.Name+".json")), []byte("full_logits")))
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestLogSoftmaxTopKMargin checks the per-step summaries on hand-made logits.
func TestLogSoftmaxTopKMargin(t *testing.T) {
	lp := LogSoftmax([]float32{1, 3, 3, -2})
	sum := 0.0
	for _, v := range lp {
		sum += math.Exp(v)
	}
	require.InDelta(t, 1, sum, 1e-12)
	require.Equal(t, []Logprob{{1, lp[1]}, {2, lp[2]}}, TopK(lp, 2), "ties go to the lower id")
	require.Zero(t, Margin(lp))
	require.InDelta(t, 2, Margin(LogSoftmax([]float32{0, 2, -1})), 1e-12)
	s := newStep([]float32{0, 2, -1}, 0, 5)
	require.Len(t, s.Top, 3)
	require.Equal(t, 1, s.Top[0].ID)
	require.InDelta(t, s.Top[1].Logprob, s.Logprob, 0)
}
