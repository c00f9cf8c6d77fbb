package benchmark

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// LlamaBench runs llama.cpp's llama-bench (../shared/bin/llama-bench picks the build for
// the CPU) on one test at a time.
type LlamaBench struct {
	Path      string // the llama-bench executable
	Threads   int    // -t
	Reps      int    // -r, repetitions averaged into avg_ts (0: llama-bench's default, 5)
	CacheType string // -ctk and -ctv: "f16" or "bf16" (llama.cpp c392e50's llama-bench refuses "f32")
}

// LlamaResult is one test of llama-bench's JSON output (-o json), the fields kvref reads.
type LlamaResult struct {
	BuildCommit string    `json:"build_commit"`
	CPUInfo     string    `json:"cpu_info"`
	ModelType   string    `json:"model_type"`
	ModelSize   int64     `json:"model_size"`
	Threads     int       `json:"n_threads"`
	TypeK       string    `json:"type_k"`
	TypeV       string    `json:"type_v"`
	NPrompt     int       `json:"n_prompt"`
	NGen        int       `json:"n_gen"`
	AvgTS       float64   `json:"avg_ts"` // tokens per second, the mean over the repetitions
	StddevTS    float64   `json:"stddev_ts"`
	SamplesTS   []float64 `json:"samples_ts"`
}

// LlamaCacheType returns llama.cpp's name (for -ctk and -ctv) of kvref's cache type, or an
// error for the types it cannot compare: llama.cpp has no int8 or fp8 cache, and its
// quantized V cache needs flash attention, a different attention path. (f32 passes here,
// but the llama-bench of ../shared/bin, llama.cpp c392e50, refuses -ctk f32.)
func LlamaCacheType(kvref string) (string, error) {
	switch kvref {
	case "f32", "f16", "bf16":
		return kvref, nil
	}
	return "", fmt.Errorf("benchmark: cache type %s has no llama.cpp equivalent to compare with without changing its attention (use f32, f16 or bf16)", kvref)
}

// ParseLlamaBench decodes llama-bench's -o json output.
func ParseLlamaBench(out []byte) ([]LlamaResult, error) {
	var rs []LlamaResult
	if err := json.Unmarshal(out, &rs); err != nil {
		return nil, fmt.Errorf("benchmark: llama-bench's output is not its JSON array of tests: %w", err)
	}
	for i, r := range rs {
		if r.AvgTS <= 0 {
			return nil, fmt.Errorf("benchmark: llama-bench test %d (n_prompt %d, n_gen %d) reports avg_ts %v", i, r.NPrompt, r.NGen, r.AvgTS)
		}
	}
	return rs, nil
}

// Run runs llama-bench on the GGUF file model for one test: nPrompt prompt tokens (pp)
// or, with nPrompt 0, nGen generated tokens (tg).
func (l LlamaBench) Run(ctx context.Context, model string, nPrompt, nGen int) (LlamaResult, error) {
	if (nPrompt == 0) == (nGen == 0) {
		return LlamaResult{}, fmt.Errorf("benchmark: a llama-bench test has prompt tokens or generated tokens, not %d and %d", nPrompt, nGen)
	}
	args := []string{"-m", model, "-p", strconv.Itoa(nPrompt), "-n", strconv.Itoa(nGen), "-t", strconv.Itoa(Threads(l.Threads)), "-o", "json"}
	if l.Reps > 0 {
		args = append(args, "-r", strconv.Itoa(l.Reps))
	}
	if l.CacheType != "" {
		args = append(args, "-ctk", l.CacheType, "-ctv", l.CacheType)
	}
	cmd := exec.CommandContext(ctx, l.Path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return LlamaResult{}, fmt.Errorf("benchmark: %s %s: %w; its last words: %s", l.Path, strings.Join(args, " "), err, lastLines(stderr.String(), 3))
	}
	rs, err := ParseLlamaBench(stdout.Bytes())
	if err != nil {
		return LlamaResult{}, err
	}
	if len(rs) != 1 || rs[0].NPrompt != nPrompt || rs[0].NGen != nGen {
		return LlamaResult{}, fmt.Errorf("benchmark: llama-bench -p %d -n %d reported %d tests, want exactly that one", nPrompt, nGen, len(rs))
	}
	return rs[0], nil
}

// lastLines returns the last n non-empty lines of s, joined by " | ".
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return "(nothing on stderr)"
	}
	return strings.Join(lines, " | ")
}
