package main

import (
	"context"
	"encoding/xml"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/engine"
	"github.com/kvref/kvref/golden"
	"github.com/kvref/kvref/server"
)

// serveKvref starts kvref's OpenAI-compatible server on 127.0.0.1 (a free port) with the
// model at path ("" for the built-in model) and the given cache, and returns its API root.
func serveKvref(t *testing.T, path string, blockSize, blocks int) string {
	t.Helper()
	return serveKvrefWith(t, path, engine.Config{BlockSize: blockSize, CacheBlocks: blocks, Threads: 2})
}

// serveKvrefWith serves the model at path through an engine of configuration cfg and returns
// the server's /v1 URL; the server stops when the test ends.
func serveKvrefWith(t *testing.T, path string, cfg engine.Config) string {
	t.Helper()
	m, err := loadModel(path, "", testWriter{t})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	eng, err := engine.New(m, cfg)
	require.NoError(t, err)
	t.Cleanup(eng.Close)
	srv := server.New(eng, server.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return "http://" + ln.Addr().String() + "/v1"
}

// junitCases parses a JUnit file strictly and returns its test case names and failure
// types ("" for a pass).
func junitCases(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var doc struct {
		XMLName xml.Name `xml:"testsuites"`
		Suites  []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Type string `xml:"type,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	dec := xml.NewDecoder(f)
	dec.Strict = true
	require.NoError(t, dec.Decode(&doc))
	require.Len(t, doc.Suites, 1)
	out := map[string]string{}
	for _, c := range doc.Suites[0].Cases {
		require.NotContains(t, out, c.Name, "one test case per scenario")
		out[c.Name] = ""
		if c.Failure != nil {
			out[c.Name] = c.Failure.Type
		}
	}
	return out
}

func TestGoldenList(t *testing.T) {
	out, stderr, code := kvref(t, "golden", "--list")
	require.Equal(t, 0, code, stderr)
	for _, c := range golden.Classes() {
		require.Contains(t, out, c.Name)
		require.Contains(t, out, c.Summary)
	}
	require.Contains(t, out, "Suite default: 35 scenarios")
	require.Contains(t, out, "mixed-hits-misses.{f32,f16,bf16,int8,fp8-e4m3,fp8-e5m2,q8_0,q4_0,q4_1,iq4_nl,q5_0,q5_1}")
	require.Contains(t, out, "Suite full: 204 scenarios")
	require.Contains(t, out, "Suite prompt-logprobs: 8 scenarios")

	out, _, code = kvref(t, "golden", "--list", "--block-size", "4", "--cache-blocks", "32")
	require.Equal(t, 0, code)
	require.Contains(t, out, "block size 4, 32 blocks = 128 tokens")
	require.Contains(t, out, "(skipped long-prompt.f32: needs about")
}

func TestGoldenAndVerifyErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"golden"}, "--out DIR is required"},
		{[]string{"golden", "--out", t.TempDir(), "--suite", "nightly"}, `unknown suite "nightly"`},
		{[]string{"golden", "--out", t.TempDir(), "--run", "nothing-matches"}, "no scenario to record"},
		{[]string{"golden", "--out", t.TempDir(), "--cache-dtypes", "f12"}, "unknown cache type"},
		{[]string{"verify", "--golden", t.TempDir()}, "exactly one of --candidate FILE, --target URL, --self"},
		{[]string{"verify", "--golden", t.TempDir(), "--self"}, "has no manifest.json, so no goldens (WriteDir writes them); record goldens there with `kvref golden --out "},
		{[]string{"verify", "--golden", t.TempDir(), "--self", "--require", "n,forks"}, `--require: golden: unknown feature "forks"`},
		{[]string{"verify", "--golden", t.TempDir(), "--self", "--cache-model", "blocks"}, `--cache-model: golden: unknown cache model "blocks"`},
	} {
		_, stderr, code := kvref(t, tc.args...)
		require.Equal(t, 1, code, "%v: %s", tc.args, stderr)
		require.Contains(t, stderr, tc.want, tc.args)
	}
}

// TestGoldenRecordAndVerifyBuiltinModel records part of the default suite with the
// built-in model, then verifies kvref against it three ways — replaying through the engine
// with another block size, from the dump that replay saved, and live through kvref's HTTP
// server — and checks that mutated dumps fail with the right messages.
func TestGoldenRecordAndVerifyBuiltinModel(t *testing.T) {
	dir := t.TempDir()
	out, stderr, code := kvref(t, "golden", "--out", dir, "--block-size", "8", "--cache-blocks", "64", "-t", "2",
		"--run", `^(mixed-hits-misses\.(f32|q8_0)|block-boundary-lengths\.f32|cancel-mid-decode\.f32|fork-partial-block\.f32)$`)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "recorded 5 scenarios into "+dir)
	man, goldens, err := golden.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, goldens, 5)
	require.Equal(t, golden.Params{BlockSize: 8, Blocks: 64, Context: 2048}, man.Params)
	require.Len(t, man.Model.SHA256, 64)

	dump := filepath.Join(dir, "self.jsonl")
	junit := filepath.Join(dir, "self.xml")
	out, stderr, code = kvref(t, "verify", "--golden", dir, "--self", "--block-size", "3", "--cache-blocks", "500", "--save", dump, "--junit", junit)
	require.Equal(t, 0, code, out+stderr)
	require.Contains(t, out, "PASS: 5 scenarios, 5 passed")
	cases := junitCases(t, junit)
	require.Len(t, cases, 5)
	for name, failure := range cases {
		require.Empty(t, failure, name)
	}

	out, stderr, code = kvref(t, "verify", "--golden", dir, "--candidate", dump, "--json")
	require.Equal(t, 0, code, out+stderr)
	require.Contains(t, out, `"passed": true`)

	url := serveKvref(t, "", 8, 64)
	out, stderr, code = kvref(t, "verify", "--golden", dir, "--target", url, "--junit", junit)
	require.Equal(t, 0, code, out+stderr)
	require.Contains(t, out, "PASS: 5 scenarios, 5 passed, 0 unsupported, 0 failed, 0 vacuous, 0 missing; expected cache hits observed: 14 of 14")
	require.Len(t, junitCases(t, junit), 5)

	// Dumps are read strictly: a misspelt key is an error, not ignored.
	data, err := os.ReadFile(dump)
	require.NoError(t, err)
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, append(data, `{"scenario":"s","request":"A","cached_token":3}`+"\n"...), 0o644))
	_, stderr, code = kvref(t, "verify", "--golden", dir, "--candidate", bad)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `unknown field "cached_token"`)

	// A mutated dump: the token of one step of request B swapped for an unlikely one.
	c, err := golden.ReadDumpFile(dump)
	require.NoError(t, err)
	s := c.Scenarios["mixed-hits-misses.f32"].Requests["B"].Choices[0]
	s[6].ID = s[6].Top[len(s[6].Top)-1].ID
	require.NoError(t, golden.WriteDumpFile(bad, c))
	out, stderr, code = kvref(t, "verify", "--golden", dir, "--candidate", bad, "--junit", junit)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "kvref verify: 1 of 5 scenarios did not pass (1 failed, 0 vacuous, 0 missing; 0 unsupported)")
	require.Contains(t, out, "FAIL [token] request B continuation 0 step 6")
	require.Equal(t, "fail", junitCases(t, junit)["mixed-hits-misses.f32"])

	// Teacher forcing needs the model the goldens were recorded with.
	_, stderr, code = kvref(t, "verify", "--golden", dir, "--candidate", dump, "-m", testdataModel(t))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "were recorded with the model of SHA-256 "+man.Model.SHA256)
}

// testdataModel writes the tiny synthetic model to a file (another model than the
// built-in one).
func testdataModel(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	_, stderr, code := kvref(t, "synth", "-o", path, "--dim", "32", "--layers", "1", "--heads", "2", "--kv-heads", "1", "--hidden", "32", "--ctx", "128")
	require.Equal(t, 0, code, stderr)
	return path
}

// TestGoldenStories260KAgainstKvrefServer is the conformance run other engines are asked
// to pass, done on kvref itself: the whole default suite recorded on stories260K, then
// kvref's own HTTP server (same block size and pool) verified live, teacher-forced, with
// every expected cache hit observed; the saved dump, mutated in the four classic ways,
// fails with the right message.
func TestGoldenStories260KAgainstKvrefServer(t *testing.T) {
	if testing.Short() {
		t.Skip("records and serves the whole default suite")
	}
	modelPath, goldenDir, out := stories260KGoldens(t)
	require.Contains(t, out, "recorded 35 scenarios")
	dir := t.TempDir()

	url := serveKvref(t, modelPath, 16, 128)
	dump := filepath.Join(dir, "kvref-serve.jsonl")
	junit := filepath.Join(dir, "junit.xml")
	out, stderr, code := kvref(t, "verify", "--golden", goldenDir, "--target", url, "-m", modelPath, "--save", dump, "--junit", junit, "-t", "2")
	require.Equal(t, 0, code, out+stderr)
	require.Contains(t, out, "PASS: 35 scenarios, 35 passed, 0 unsupported, 0 failed, 0 vacuous, 0 missing; expected cache hits observed: 112 of 112; teacher-forced")
	cases := junitCases(t, junit)
	require.Len(t, cases, 35)
	for name, failure := range cases {
		require.Empty(t, failure, name)
	}

	_, goldens, err := golden.ReadDir(goldenDir)
	require.NoError(t, err)
	cand, err := golden.ReadDumpFile(dump)
	require.NoError(t, err)
	mutate := func(name string, f func(c *golden.CandidateScenario)) string {
		c, err := golden.ReadDumpFile(dump)
		require.NoError(t, err)
		f(c.Scenarios[name])
		path := filepath.Join(dir, "mutated.jsonl")
		require.NoError(t, golden.WriteDumpFile(path, c))
		return path
	}
	steps := func(c *golden.CandidateScenario, req string) *[]golden.CandidateStep {
		return &c.Requests[req].Choices[0]
	}
	for _, tc := range []struct {
		name, scenario, want string
		f                    func(c *golden.CandidateScenario)
	}{
		{"swapped token", "prefix-diverges-mid-block.f32", "FAIL [token] request C continuation 0 step 5", func(c *golden.CandidateScenario) {
			s := (*steps(c, "C"))[5]
			s.ID = s.Top[len(s.Top)-1].ID
			(*steps(c, "C"))[5] = s
		}},
		{"perturbed logprob", "long-prompt.f32", "FAIL [logprob] request B continuation 0 step 10", func(c *golden.CandidateScenario) {
			(*steps(c, "B"))[10].Top[0].Logprob += 0.2
		}},
		{"dropped step", "preempt-recompute.f32", "FAIL [dropped] request P3 continuation 0: step 200 is missing", func(c *golden.CandidateScenario) {
			s := steps(c, "P3")
			*s = append((*s)[:200], (*s)[201:]...)
		}},
		{"cross-wired", "mixed-hits-misses.f32", "FAIL [cross-wired] request B returned the output of request D", func(c *golden.CandidateScenario) {
			c.Requests["B"].Choices, c.Requests["D"].Choices = c.Requests["D"].Choices, c.Requests["B"].Choices
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := mutate(tc.scenario, tc.f)
			out, stderr, code := kvref(t, "verify", "--golden", goldenDir, "--candidate", path, "-m", modelPath, "--run", `^`+tc.scenario+`$`, "-t", "2")
			require.Equal(t, 1, code, out)
			require.Contains(t, out, tc.want)
			require.Contains(t, stderr, "1 of 1 scenarios did not pass")
		})
	}
	require.Len(t, cand.Scenarios, len(goldens))
}

// TestGoldenSaysWhyNothingWasRecorded: when every selected scenario is skipped, the reasons
// are printed before the error, so the user learns what to change.
func TestGoldenSaysWhyNothingWasRecorded(t *testing.T) {
	_, stderr, code := kvref(t, "golden", "--cache-blocks", "8", "--run", "long-prompt", "--out", t.TempDir())
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "kvref golden: skipping long-prompt.f32: needs about")
	require.Contains(t, stderr, "no scenario to record")
	require.Less(t, strings.Index(stderr, "skipping long-prompt"), strings.Index(stderr, "no scenario to record"), "the reason comes first")
}
