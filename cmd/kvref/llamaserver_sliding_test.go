//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/golden"
)

// TestLlamaServerIgnoresTheSlidingWindow records what llama.cpp c392e50 does with a
// llama-architecture GGUF carrying llama.attention.sliding_window: its loader lists the
// key, yet it sets n_swa = 0 and attends over every position. Run with the
// documentation's f32 command lines, the sliding suite fails every scenario, and only at
// queries past the window; the same answers pass the same prompts recorded on the twin
// model whose window is off. So llama-server's column for the sliding classes is a fail,
// and no sliding-window cache of this version is verified.
func TestLlamaServerIgnoresTheSlidingWindow(t *testing.T) {
	bin := llamaServerBin(t)
	model, twin, dir, _, _ := slidingGoldens(t)
	cmd := docLlamaServerCommands(t)["f32"]
	srv := startLlamaServer(t, bin, cmd, model)
	dump := filepath.Join(t.TempDir(), "llama-server-swa.jsonl")
	run := verifyDoc(t, cmd, srv, dir, model, "--save", dump)
	srv.stop()
	log := readFile(t, srv.log)
	require.Regexp(t, `llama\.attention\.sliding_window u32 += 64`, log, "the loader reads the key")
	require.Regexp(t, `n_swa += 0\n`, log, "and sets no window")
	require.Equal(t, 1, run.code, run.stderr)
	_, list, err := golden.ReadDir(dir)
	require.NoError(t, err)
	goldens := map[string]*golden.Golden{}
	for _, g := range list {
		goldens[g.Scenario.Name] = g
	}
	require.Len(t, run.rep.Scenarios, 4)
	for _, s := range run.rep.Scenarios {
		require.Equal(t, golden.StatusFail, s.Status, s.Name)
		for _, f := range s.Failures {
			require.Contains(t, []string{golden.KindLogprob, golden.KindToken}, f.Kind, "%s: %s", s.Name, f.Message)
			require.GreaterOrEqual(t, queryPos(t, goldens, s.Name, f.Request, f.Step), 64, "%s: %s", s.Name, f.Message)
		}
	}

	// The same prompts, recorded on the window-off twin: llama-server's answers pass.
	twinDir := recordSamePrompts(t, list, twin)
	out, stderr, code := kvref(t, "verify", "--golden", twinDir, "--candidate", dump, "-m", twin, "--cache-model", "slots", "--allow-vacuous", "--json", "-t", "2")
	require.Equal(t, 0, code, out+stderr)
	rep := decodeReport(t, out, stderr)
	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	t.Logf("llama-server's answers against the same prompts recorded on the window-off twin:\n%s", table.String())
	require.Len(t, rep.Scenarios, 4)
	for _, s := range rep.Scenarios {
		require.Equal(t, golden.StatusPass, s.Status, "%s: %+v", s.Name, s.Failures)
		require.Less(t, s.WorstError, 1e-4, "%s: llama-server computes what the window-off twin computes", s.Name)
	}
}

// recordSamePrompts records, on model, the scenarios of goldens with every prompt given as
// the golden's exact token ids (so outputs of the golden's model are replayed as they
// were) and no run expectations, and returns the directory.
func recordSamePrompts(t *testing.T, goldens []*golden.Golden, model string) string {
	t.Helper()
	files := t.TempDir()
	args := []string{"golden", "--model", model, "-t", "2"}
	for _, g := range goldens {
		sc := g.Scenario
		sc.Expect = golden.Expect{}
		sc.Events = nil
		for _, e := range g.Scenario.Events {
			if len(e.Submit) > 0 {
				var wave []golden.Request
				for _, r := range e.Submit {
					r.Prompt = golden.Prompt{IDs: g.Request(r.ID).PromptIDs}
					wave = append(wave, r)
				}
				e.Submit = wave
			}
			sc.Events = append(sc.Events, e)
		}
		b, err := json.Marshal(sc)
		require.NoError(t, err)
		path := filepath.Join(files, fmt.Sprintf("%s.json", sc.Name))
		require.NoError(t, os.WriteFile(path, b, 0o644))
		args = append(args, "--scenario", path)
	}
	dir := t.TempDir()
	_, stderr, code := kvref(t, append(args, "--out", dir)...)
	require.Equal(t, 0, code, stderr)
	return dir
}
