// Package nodellama runs node-llama-cpp 3.22.1 (which bundles llama.cpp 0.5.0 of 2026-09)
// from tools/node-llama-cpp: as a logits oracle (logits.mjs), as a verify target
// (serve.mjs) and as a speed yardstick (bench.mjs). docs/llamacpp-node.md describes it.
//
// The npm modules are installed by .ci/run (`npm ci` from the lockfile, prebuilt linux-x64
// binaries only). Tests that need them skip when node or the modules are missing, except
// under CI (the environment variable CI set), where they fail.
package nodellama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Version is the pinned node-llama-cpp version (tools/node-llama-cpp/package.json).
const Version = "3.22.1"

// ToolDir returns tools/node-llama-cpp under the module root.
func ToolDir(moduleRoot string) string { return filepath.Join(moduleRoot, "tools", "node-llama-cpp") }

// Check says why node-llama-cpp cannot run from dir: node missing from PATH, or the npm
// modules not installed there. It returns nil when both are present.
func Check(dir string) error {
	if _, err := exec.LookPath("node"); err != nil {
		return fmt.Errorf("node is not on PATH: %w", err)
	}
	for _, p := range []string{"node_modules/node-llama-cpp/package.json", "node_modules/@node-llama-cpp/linux-x64/package.json"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			return fmt.Errorf("%s is not installed (run: cd %s && NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm ci --omit=optional --ignore-scripts): %w", p, dir, err)
		}
	}
	return nil
}

// Require returns dir when node-llama-cpp can run from it; otherwise it skips the test,
// or fails it when the environment variable CI is set (CI installs the modules, so their
// absence there is a broken install, not a missing optional tool).
func Require(t testing.TB, dir string) string {
	t.Helper()
	if err := Check(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but node-llama-cpp cannot run: %v", err)
		}
		t.Skipf("node-llama-cpp is not available (.ci/run installs it): %v", err)
	}
	return dir
}

// Step is one position of an oracle run: the logits over the whole vocabulary (by token
// id) after the prompt (Step 0) or after the Step-th generated token, and the greedy
// choice from them.
type Step struct {
	Step   int       `json:"step"`
	Next   int       `json:"next"`
	Logits []float64 `json:"logits"`
}

// Run is the output of logits.mjs: the steps and the generated token ids.
type Run struct {
	Steps  []Step
	Tokens []int
}

// LogitsOptions are logits.mjs's settings.
type LogitsOptions struct {
	Steps   int    // greedy steps after the prompt
	Threads int    // llama.cpp threads (0: 1)
	Cache   string // KV cache type ("": f32)
	Ctx     int    // context size (0: 512)
	SWAFull bool   // swaFullCache: the sliding layers keep the whole context
}

// Logits runs tools/node-llama-cpp/logits.mjs in dir on the GGUF model with the token-id
// prompt: the logits after the prompt, then after each of opt.Steps greedy tokens, with
// flash attention off.
func Logits(ctx context.Context, dir, model string, prompt []int, opt LogitsOptions) (*Run, error) {
	ids := make([]string, len(prompt))
	for i, id := range prompt {
		ids[i] = strconv.Itoa(id)
	}
	args := []string{"logits.mjs", "--model", model, "--prompt", strings.Join(ids, ","), "--steps", strconv.Itoa(opt.Steps)}
	if opt.Threads > 0 {
		args = append(args, "--threads", strconv.Itoa(opt.Threads))
	}
	if opt.Cache != "" {
		args = append(args, "--cache", opt.Cache)
	}
	if opt.Ctx > 0 {
		args = append(args, "--ctx", strconv.Itoa(opt.Ctx))
	}
	if opt.SWAFull {
		args = append(args, "--swa-full")
	}
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("node %s: %w\n%s", strings.Join(args, " "), err, tail(stderr.Bytes()))
	}
	run := &Run{}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	done := false
	for sc.Scan() {
		var line struct {
			Step
			Done   bool  `json:"done"`
			Tokens []int `json:"tokens"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, fmt.Errorf("logits.mjs on %s: line %d: %w", model, len(run.Steps)+1, err)
		}
		if line.Done {
			run.Tokens, done = line.Tokens, true
			continue
		}
		run.Steps = append(run.Steps, line.Step)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !done || len(run.Steps) != opt.Steps+1 {
		return nil, fmt.Errorf("logits.mjs on %s: %d steps and done=%v, want %d steps\n%s", model, len(run.Steps), done, opt.Steps+1, tail(stderr.Bytes()))
	}
	return run, nil
}

// tail returns the end of a process's output.
func tail(b []byte) string {
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// Diff is the comparison of one step's logits.
type Diff struct {
	Step    int     // 0: after the prompt
	TopK    float64 // largest |kvref − llama.cpp| over the union of both engines' top-k ids
	All     float64 // largest |kvref − llama.cpp| over the whole vocabulary
	ArgMax  [2]int  // the greedy token of kvref and of llama.cpp
	Margin  float64 // kvref's gap between its best and second-best logit
	TopKIDs []int   // kvref's top-k ids, best first
}

// Compare compares kvref's logits (one row per step) with an oracle run, over the top k.
func Compare(kvref [][]float32, run *Run, k int) ([]Diff, error) {
	if len(kvref) != len(run.Steps) {
		return nil, fmt.Errorf("nodellama: kvref has %d steps of logits, llama.cpp %d", len(kvref), len(run.Steps))
	}
	out := make([]Diff, len(kvref))
	for i, row := range kvref {
		node := run.Steps[i].Logits
		if len(node) != len(row) {
			return nil, fmt.Errorf("nodellama: step %d: kvref has %d logits, llama.cpp %d", i, len(row), len(node))
		}
		d := Diff{Step: i, ArgMax: [2]int{argmax32(row), run.Steps[i].Next}}
		ids := topK32(row, k)
		d.TopKIDs = ids
		if len(ids) > 1 {
			d.Margin = float64(row[ids[0]] - row[ids[1]])
		}
		union := append(append([]int{}, ids...), topK64(node, k)...)
		for _, id := range union {
			d.TopK = max(d.TopK, abs(float64(row[id])-node[id]))
		}
		for id := range row {
			d.All = max(d.All, abs(float64(row[id])-node[id]))
		}
		out[i] = d
	}
	return out, nil
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func argmax32(v []float32) int {
	best := 0
	for i := range v {
		if v[i] > v[best] {
			best = i
		}
	}
	return best
}

// topK32 returns the ids of the k largest values, best first (lowest id on ties).
func topK32(v []float32, k int) []int {
	w := make([]float64, len(v))
	for i, x := range v {
		w[i] = float64(x)
	}
	return topK64(w, k)
}

func topK64(v []float64, k int) []int {
	var ids []int
	for range min(k, len(v)) {
		best := -1
		for i, x := range v {
			taken := false
			for _, id := range ids {
				taken = taken || id == i
			}
			if !taken && (best < 0 || x > v[best]) {
				best = i
			}
		}
		ids = append(ids, best)
	}
	return ids
}
