package oracle_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/engine/oracle"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model/builtin"
	"github.com/kvref/kvref/quant"
)

// A mutant is a bug injected into kvref's real source for one build, with go build's
// -overlay: the one occurrence of find in the .go files of package dir becomes replace, and
// extra files are added to that package. Nothing in the source tree changes.
type mutant struct {
	name, dir, find, replace string
	extra                    map[string]string // file name → contents, added to dir
	bitwiseSees              bool              // the bug is outside the code both sides of --check share
	cacheType                string            // the victim's cache type ("": int8)
}

var mutants = []mutant{
	{
		// The scaled encoder (int8 and fp8-e4m3; the victim runs int8) scales every head by head 0's maxabs (and stores that scale).
		name: "int8-head0-scale", dir: "quant",
		find:    "s := headScale(maxAbs(x), c.max)",
		replace: "s := headScale(maxAbs(src[:headDim]), c.max) // MUTANT",
	},
	{
		// The scaled encoder (int8 and fp8-e4m3; the victim runs int8) stores head h+1's values (and scale) in head h's slot.
		name: "int8-off-by-one-head", dir: "quant",
		find:    "x := src[h*headDim : (h+1)*headDim]\n\t\tout := dst[h*(scaleBytes+headDim) : (h+1)*(scaleBytes+headDim)]\n\t\ts := headScale(maxAbs(x), c.max)",
		replace: "x := src[(h+1)%(len(src)/headDim)*headDim : ((h+1)%(len(src)/headDim)+1)*headDim] // MUTANT\n\t\tout := dst[h*(scaleBytes+headDim) : (h+1)*(scaleBytes+headDim)]\n\t\ts := headScale(maxAbs(x), c.max)",
	},
	{
		// The pool writes each head's key scale into the value row and the value scale into
		// the key row.
		name: "swapped-kv-scale", dir: "kvcache",
		find:    "p.cfg.VType.Encode(p.VRow(layer, blockID, slot), v, p.cfg.KVHeads, p.cfg.HeadDim)",
		replace: "p.cfg.VType.Encode(p.VRow(layer, blockID, slot), v, p.cfg.KVHeads, p.cfg.HeadDim)\n\tmutantSwapScales(p.KRow(layer, blockID, slot), p.VRow(layer, blockID, slot), p.cfg.KVHeads, p.cfg.HeadDim)",
		extra: map[string]string{"zz_mutant.go": `package kvcache

// mutantSwapScales swaps the 4-byte scale in front of every head between a key row and a
// value row (int8 and fp8-e4m3 layout).
func mutantSwapScales(k, v []byte, heads, headDim int) {
	for h := 0; h < heads; h++ {
		o := h * (4 + headDim)
		for i := 0; i < 4; i++ {
			k[o+i], v[o+i] = v[o+i], k[o+i]
		}
	}
}
`},
		bitwiseSees: true,
	},
	{
		// The q5_1 encoder puts the fifth bit of element 16+j one place low in qh (on
		// element 15+j's), and its decoder reads it back from there: consistent with itself.
		name: "q5_1-fifth-bit-shifted", dir: "quant", cacheType: "q5_1",
		find:    "h |= uint32(c1&0x10) >> 4 << uint(j+blockHalf)",
		replace: "h |= uint32(c1&0x10) >> 4 << uint(j+blockHalf-1) // MUTANT",
	},
}

// mutantOutcome is what the victim reports from inside a mutant build.
type mutantOutcome struct {
	Bitwise string // "" when --check passed, else its error
	Oracle  string // "" when the oracle passed, else its error
}

const (
	mutantEnv     = "KVREF_ORACLE_MUTANT"
	mutantTypeEnv = "KVREF_ORACLE_MUTANT_CACHE_TYPE"
)

// TestOracleCatchesInjectedCodecBugs builds kvref once per mutant with a bug injected into the
// real source (see mutants) and runs TestMutantVictim in each build: the oracle must fail
// every time; the bitwise --check must pass for the codec bugs, which both of its sides
// share (that is why the oracle exists), and fail for the pool's.
//
//	go test ./engine/oracle -run TestOracleCatchesInjectedCodecBugs -v
func TestOracleCatchesInjectedCodecBugs(t *testing.T) {
	t.Parallel()

	if testing.Short() {
		t.Skip("builds kvref once per mutant (about a minute): skipped with -short")
	}
	gobin, err := exec.LookPath("go")
	require.NoError(t, err, "the mutants are built with the go command, which is not on PATH")
	root := testutil.ModuleRoot(t)
	for _, mu := range mutants {
		t.Run(mu.name, func(t *testing.T) {
			overlay := writeOverlay(t, root, mu)
			cmd := exec.Command(gobin, "test", "-overlay", overlay, "-count=1", "-run", "^TestMutantVictim$", "-v", "./engine/oracle")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), mutantEnv+"="+mu.name, mutantTypeEnv+"="+mu.cacheType)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "the mutant build or its victim failed:\n%s", out)
			var got mutantOutcome
			found := false
			for _, line := range strings.Split(string(out), "\n") {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "MUTANT-OUTCOME "); ok {
					require.NoError(t, json.Unmarshal([]byte(rest), &got))
					found = true
				}
			}
			require.True(t, found, "no outcome in the victim's output:\n%s", out)
			t.Logf("--check: %s", orPassed(got.Bitwise))
			t.Logf("oracle:  %s", orPassed(got.Oracle))
			require.NotEmpty(t, got.Oracle, "the oracle must catch %s", mu.name)
			if mu.bitwiseSees {
				require.NotEmpty(t, got.Bitwise, "--check sees a bug outside the shared code")
			} else {
				require.Empty(t, got.Bitwise, "--check cannot see a bug in the codec both of its sides share")
			}
		})
	}
}

func orPassed(s string) string {
	if s == "" {
		return "passed"
	}
	return s
}

// writeOverlay writes the mutated file (and the extra ones) to a temporary directory and an
// overlay file mapping the source paths to them, and returns the overlay's path.
func writeOverlay(t *testing.T, root string, mu mutant) string {
	t.Helper()
	dir := filepath.Join(root, mu.dir)
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	replace := map[string]string{}
	tmp := t.TempDir()
	hits := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		n := strings.Count(string(data), mu.find)
		if n == 0 {
			continue
		}
		hits += n
		mutated := filepath.Join(tmp, filepath.Base(f))
		require.NoError(t, os.WriteFile(mutated, []byte(strings.Replace(string(data), mu.find, mu.replace, 1)), 0o644))
		replace[f] = mutated
	}
	require.Equal(t, 1, hits, "mutant %s: %q must occur exactly once in %s's source; if the code moved, update the mutant in engine/oracle/mutants_test.go", mu.name, mu.find, mu.dir)
	for name, text := range mu.extra {
		p := filepath.Join(tmp, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		replace[filepath.Join(dir, name)] = p
	}
	b, err := json.Marshal(map[string]any{"Replace": replace})
	require.NoError(t, err)
	path := filepath.Join(tmp, "overlay.json")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

// TestMutantVictim runs only inside a mutant build (TestOracleCatchesInjectedCodecBugs sets
// KVREF_ORACLE_MUTANT): stories260K with an int8 cache (or the mutant's cache type), once
// under the bitwise --check and once under the oracle, reporting both outcomes on one line.
func TestMutantVictim(t *testing.T) {
	t.Parallel()

	if os.Getenv(mutantEnv) == "" {
		t.Skip("runs only in the mutant builds of TestOracleCatchesInjectedCodecBugs")
	}
	m, err := builtin.Model()
	require.NoError(t, err)
	var got mutantOutcome
	ct := quant.Int8
	if name := os.Getenv(mutantTypeEnv); name != "" {
		ct, err = quant.ParseCacheType(name)
		require.NoError(t, err)
	}
	e, err := engine.New(m, engine.Config{BlockSize: 16, KType: ct, VType: ct, Threads: 2})
	require.NoError(t, err)
	defer e.Close()
	_, err = e.Generate(engine.Request{Prompt: prompt(m, 40), MaxTokens: 40, IgnoreEOS: true, Check: true}, func(engine.Token) error { return nil })
	var ce *engine.CheckError
	switch {
	case errors.As(err, &ce):
		got.Bitwise = err.Error()
	default:
		require.NoError(t, err)
	}
	s := fill(t, e, prompt(m, 80), 30)
	if _, err := oracle.Check(e.Runner(), e.Pool(), s); err != nil {
		got.Oracle = err.Error()
	}
	b, err := json.Marshal(got)
	require.NoError(t, err)
	fmt.Printf("MUTANT-OUTCOME %s\n", b)
}
