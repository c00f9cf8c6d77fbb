// Package testutil holds helpers shared by kvref's tests.
package testutil

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// ModuleRoot returns the directory holding go.mod, walking up from the working directory.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testutil: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Shared returns the path of a file under ../shared (beside the module root), skipping the
// test when it is absent: the shared models and vectors exist only in the kvref workspace.
func Shared(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(ModuleRoot(t), "..", "shared", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("../shared/%s is not present (the shared models and vectors exist only in the kvref workspace): %v", rel, err)
	}
	return p
}

// Golden is one golden file of ../shared/golden: an independent engine's greedy run.
type Golden struct {
	Name      string
	Prompt    string `json:"prompt"`
	PromptIDs []int  `json:"prompt_ids"`
	Steps     []struct {
		ID  int          `json:"id"`
		Top [][2]float64 `json:"top"`
	} `json:"steps"`
}

// Tokens returns the prompt ids followed by every golden token but the last: the sequence
// whose logits at positions len(PromptIDs)-1 onwards produced the steps.
func (g *Golden) Tokens() []int {
	out := append([]int(nil), g.PromptIDs...)
	for _, s := range g.Steps[:len(g.Steps)-1] {
		out = append(out, s.ID)
	}
	return out
}

// Goldens loads every golden file for a model under ../shared/golden/MODEL, skipping the
// test when the directory is absent.
func Goldens(t testing.TB, model string) []Golden {
	t.Helper()
	dir := Shared(t, filepath.Join("golden", model))
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files in %s", dir)
	}
	var out []Golden
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		g := Golden{Name: filepath.Base(f)}
		if err := json.Unmarshal(data, &g); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(g.Steps) == 0 || len(g.PromptIDs) == 0 {
			t.Fatalf("%s: empty golden", f)
		}
		out = append(out, g)
	}
	return out
}
