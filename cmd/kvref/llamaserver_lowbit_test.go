package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/synth"
)

// TestLlamaServerLowBitCaches verifies llama-server's 4- and 5-bit caches against goldens
// recorded at the same cache types, on TestLlamaServerQuantizedCaches's synthetic model with
// 64-wide heads (llama-server cannot store stories260K's 8-wide heads in blocks of 32): each
// of -ctk/-ctv q4_0, q4_1, iq4_nl, q5_0 and q5_1 (with flash attention, which a quantized V
// cache needs) passes the hit-path scenarios recorded with --cache-dtype of that type, and a
// quantized K cache beside an f16 V cache (-ctk q4_0 -ctv f16, without flash attention)
// passes the scenarios recorded with the same -ctk/-ctv pair. The tolerances still see the
// type: the q5_0 goldens fail against a q4_0 cache posing as q5_0.
func TestLlamaServerLowBitCaches(t *testing.T) {
	start := time.Now()
	bin, _, _, cmds := llamaServerSetup(t)
	shape := synth.Shape{Name: "kvref-synthetic-head64", Dim: 128, Layers: 2, Heads: 2, KVHeads: 1, Hidden: 256, Context: 2048, RopeBase: 10000, Seed: 1}
	synthetic := asciiVocabModel(t, shape)
	for _, c := range []struct {
		name   string
		record []string // the cache flags of kvref golden and kvref verify
		server []string // llama-server's cache flags, over the documentation's command line
		cmd    string   // that command line
	}{
		{"q4_0", []string{"--cache-dtype", "q4_0"}, []string{"-ctk", "q4_0", "-ctv", "q4_0"}, "q8_0"},
		{"q4_1", []string{"--cache-dtype", "q4_1"}, []string{"-ctk", "q4_1", "-ctv", "q4_1"}, "q8_0"},
		{"iq4_nl", []string{"--cache-dtype", "iq4_nl"}, []string{"-ctk", "iq4_nl", "-ctv", "iq4_nl"}, "q8_0"},
		{"q5_0", []string{"--cache-dtype", "q5_0"}, []string{"-ctk", "q5_0", "-ctv", "q5_0"}, "q8_0"},
		{"q5_1", []string{"--cache-dtype", "q5_1"}, []string{"-ctk", "q5_1", "-ctv", "q5_1"}, "q8_0"},
		{"q4_0+f16", []string{"-ctk", "q4_0", "-ctv", "f16"}, []string{"-ctk", "q4_0", "-ctv", "f16"}, "f32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"golden", "--model", synthetic, "--out", dir, "-t", "2", "--run", `^(mixed-hits-misses|block-boundary-lengths)\.`}, c.record...)
			_, stderr, code := kvref(t, args...)
			require.Equal(t, 0, code, stderr)
			s := startLlamaServer(t, bin, cmds[c.cmd], synthetic, c.server...)
			defer s.stop()
			run := verifyDoc(t, cmds[c.cmd], s, dir, synthetic, append([]string{"--cache-dtype", ""}, c.record...)...)
			require.Equal(t, 0, run.code, run.stderr)
			requireAllPass(t, run.rep, 2)
			if c.name == "q5_0" {
				s.stop()
				q4 := startLlamaServer(t, bin, cmds[c.cmd], synthetic, "-ctk", "q4_0", "-ctv", "q4_0")
				defer q4.stop()
				requireQuantizationFailure(t, verifyDoc(t, cmds[c.cmd], q4, dir, synthetic, append([]string{"--cache-dtype", ""}, c.record...)...))
			}
		})
	}
	t.Logf("TestLlamaServerLowBitCaches: %.1f s", time.Since(start).Seconds())
}
