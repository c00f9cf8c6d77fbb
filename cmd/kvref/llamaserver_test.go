//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/golden"
	"github.com/kvref/kvref/internal/testutil"
	"github.com/kvref/kvref/model/synth"
)

// llamaServer is a running ../shared/bin/llama-server (llama.cpp c392e50).
type llamaServer struct {
	url  string // the API root, http://127.0.0.1:PORT/v1
	cmd  *exec.Cmd
	log  string // its stdout and stderr
	done chan struct{}
}

// docCommand is one pair of command lines from docs/golden.md's llama-server section: the
// server to start and the kvref verify to run against it.
type docCommand struct {
	cacheType string   // the verify line's --cache-dtype
	server    []string // llama-server's arguments
	verify    []string // kvref verify's arguments, from "verify" on
	port      string   // the port both lines use
}

// docLlamaServerCommands reads the tested command lines of docs/golden.md, by cache type.
func docLlamaServerCommands(t *testing.T) map[string]docCommand {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testutil.ModuleRoot(t), "docs", "golden.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(data), "<!-- llama-server commands:")
	require.True(t, ok, "docs/golden.md has no llama-server commands marker")
	block, _, ok := strings.Cut(rest, "<!-- end of llama-server commands -->")
	require.True(t, ok)
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(strings.ReplaceAll(block, "\\\n", " ")))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "llama-server ") || strings.HasPrefix(l, "kvref verify ") {
			lines = append(lines, strings.TrimSpace(strings.TrimSuffix(l, "&")))
		}
	}
	out := map[string]docCommand{}
	for i := 0; i+1 < len(lines); i += 2 {
		server, verify := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		require.Equal(t, "llama-server", server[0], lines[i])
		require.Equal(t, []string{"kvref", "verify"}, verify[:2], lines[i+1])
		c := docCommand{server: server[1:], verify: verify[1:], port: flagValue(t, server, "--port"), cacheType: flagValue(t, verify, "--cache-dtype")}
		require.Contains(t, lines[i+1], "http://127.0.0.1:"+c.port+"/v1", "the verify line drives the server above it")
		out[c.cacheType] = c
	}
	require.Len(t, lines, 2*len(out))
	return out
}

// flagValue returns the value after flag in args.
func flagValue(t *testing.T, args []string, flag string) string {
	t.Helper()
	i := slices.Index(args, flag)
	require.True(t, i >= 0 && i+1 < len(args), "%v has no %s", args, flag)
	return args[i+1]
}

// substitute replaces the documentation's placeholders in args.
func substitute(args []string, repl ...string) []string {
	r := strings.NewReplacer(repl...)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}

// replaceFlag returns args with flag's value set to v.
func replaceFlag(args []string, flag, v string) []string {
	out := slices.Clone(args)
	out[slices.Index(out, flag)+1] = v
	return out
}

// startLlamaServer starts ../shared/bin/llama-server with the documentation's arguments for
// cache type c (its model, port and any replaced flags given) on a free loopback port, and
// waits for /health. The server is stopped when the test ends; it is in its own process
// group and gets SIGKILL if the test binary dies first (a timeout), so none is left behind.
func startLlamaServer(t *testing.T, bin string, c docCommand, model string, replace ...string) *llamaServer {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ { // the free port may be taken before the server binds it
		port := freePort(t)
		args := substitute(c.server, "MODEL.gguf", model)
		args = replaceFlag(args, "--port", port)
		for i := 0; i+1 < len(replace); i += 2 {
			args = replaceFlag(args, replace[i], replace[i+1])
		}
		s, err := launch(t, bin, args, port)
		if err == nil {
			return s
		}
		lastErr = err
	}
	require.FailNow(t, fmt.Sprint(lastErr))
	return nil
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

func launch(t *testing.T, bin string, args []string, port string) (*llamaServer, error) {
	logPath := filepath.Join(t.TempDir(), "llama-server.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, err
	}
	s := &llamaServer{url: "http://127.0.0.1:" + port + "/v1", cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		logFile.Close()
		close(s.done)
	}()
	t.Cleanup(s.stop)
	t.Logf("started llama-server %s (pid %d)", strings.Join(args, " "), cmd.Process.Pid)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return nil, fmt.Errorf("llama-server %s exited before it was healthy:\n%s", strings.Join(args, " "), s.logTail())
		default:
		}
		resp, err := http.Get("http://127.0.0.1:" + port + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.stop()
	return nil, fmt.Errorf("llama-server %s did not become healthy in 60 s:\n%s", strings.Join(args, " "), s.logTail())
}

// stop ends the server's process group: SIGTERM, then SIGKILL after 5 s.
func (s *llamaServer) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// logTail returns the end of the server's log.
func (s *llamaServer) logTail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// llamaServerSetup returns ../shared/bin/llama-server (skipping the test, and saying why,
// when ../shared/bin is absent), stories260K, the default suite recorded on it and the
// documentation's command lines.
func llamaServerSetup(t *testing.T) (bin, model, dir string, cmds map[string]docCommand) {
	t.Helper()
	bin = llamaServerBin(t)
	start := time.Now()
	model, dir, _ = stories260KGoldens(t)
	t.Logf("default suite recorded on stories260K (or shared with an earlier test) in %.1f s", time.Since(start).Seconds())
	return bin, model, dir, docLlamaServerCommands(t)
}

// llamaServerBin returns ../shared/bin/llama-server, skipping the test (and saying why)
// when ../shared/bin is absent.
func llamaServerBin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the llama-server comparisons are a long suite: they run in the full go test (.ci/run), not with -short")
	}
	bin := filepath.Join(testutil.ModuleRoot(t), "..", "shared", "bin", "llama-server")
	if _, err := os.Stat(filepath.Dir(bin)); err != nil {
		t.Skipf("llama.cpp's llama-server is not available: ../shared/bin is absent (%v); it exists in the kvref workspace and its CI", err)
	}
	return bin
}

// verifyRun is the outcome of one kvref verify.
type verifyRun struct {
	rep    *golden.Report // from --json
	stderr string
	code   int    // exit status
	junit  string // the JUnit file it wrote
}

// verifyDoc runs the documentation's verify line for c against s with the goldens in dir and
// the model, plus extra flags, and logs the report as a table.
func verifyDoc(t *testing.T, c docCommand, s *llamaServer, dir, model string, extra ...string) verifyRun {
	t.Helper()
	junit := filepath.Join(t.TempDir(), "junit.xml")
	args := substitute(c.verify, "goldens/", dir, "MODEL.gguf", model, "http://127.0.0.1:"+c.port+"/v1", s.url)
	args = replaceFlag(args, "--junit", junit)
	args = append(args, "--json", "-t", "2", "--timeout", "3m")
	args = append(args, extra...)
	start := time.Now()
	out, stderr, code := kvref(t, args...)
	rep := decodeReport(t, out, stderr)
	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	t.Logf("kvref %s\n(%.1f s, exit %d)\n%s", strings.Join(args, " "), time.Since(start).Seconds(), code, table.String())
	return verifyRun{rep, stderr, code, junit}
}

func decodeReport(t *testing.T, out, stderr string) *golden.Report {
	t.Helper()
	var rep golden.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "stdout %q, stderr %s", out, stderr)
	return &rep
}

// TestLlamaServerPassesTheDefaultSuite runs the documentation's f32 command lines: the
// default suite's 13 f32 scenarios against llama-server with an f32 cache, teacher-forced.
// Every scenario passes except fork-partial-block, which is unsupported (llama-server
// refuses n > 1); the hits are read from timings.prompt_n, and every expected hit is
// observed or, for a slot cache, served to a sibling of the same wave; the eviction
// scenario's misses are real misses. Then --require n fails the fork scenario, a control
// run (cache_prompt false) passes with no hits, and a proxy
// that serves one block of another prompt to a request, and one that drops a token from a
// response, make the run fail where they act.
func TestLlamaServerPassesTheDefaultSuite(t *testing.T) {
	start := time.Now()
	bin, model, dir, cmds := llamaServerSetup(t)
	cmd := cmds["f32"]
	srv := startLlamaServer(t, bin, cmd, model)
	dump := filepath.Join(t.TempDir(), "llama-server.jsonl")
	run := verifyDoc(t, cmd, srv, dir, model, "--save", dump)
	require.Equal(t, 0, run.code, run.stderr)
	require.True(t, run.rep.Passed)
	require.Len(t, run.rep.Scenarios, 13)
	for _, s := range run.rep.Scenarios {
		if s.Class == "fork-partial-block" {
			require.Equal(t, golden.StatusUnsupported, s.Status, s.Name)
			require.Equal(t, golden.FeatureN, s.Unsupported[0].Feature)
			require.Contains(t, s.Unsupported[0].Message, "Only one completion choice is allowed")
			continue
		}
		require.Equal(t, golden.StatusPass, s.Status, "%s: %+v %v", s.Name, s.Failures, s.Vacuous)
		require.Equal(t, golden.EvidencePromptN, s.HitEvidence, s.Name)
		require.Equal(t, s.ExpectedHits, s.ObservedHits+s.SlotBoundHits, "%s: every expected hit observed or served to a sibling", s.Name)
		if s.ExpectedHits > 0 {
			require.Positive(t, s.ObservedHits, "%s: a scenario about hits has at least one", s.Name)
		}
		require.Less(t, s.WorstError, 1e-3, "%s: llama.cpp with an f32 cache agrees with kvref to about 1e-5", s.Name)
		if s.Class == "stop-mid-block" {
			require.Contains(t, strings.Join(s.Notes, "\n"), "leaves out the token that completes the stop string")
		}
	}
	require.Equal(t, "", junitCases(t, run.junit)["mixed-hits-misses.f32"])
	require.Contains(t, readFile(t, run.junit), `<skipped message="unsupported: request A needs n &gt; 1`)

	// Engines that must support forks say so.
	out, stderr, code := kvref(t, "verify", "--golden", dir, "--candidate", dump, "--run", `^fork-partial-block\.f32$`, "--require", "n")
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "FAIL [unsupported] request A needs n > 1")
	require.Contains(t, stderr, "1 of 1 scenarios did not pass (1 failed")

	// The control run: with cache_prompt false on every request nothing is reused.
	control := verifyDoc(t, cmd, srv, dir, model, "--control", "--run", `^mixed-hits-misses\.f32$`)
	require.Equal(t, 0, control.code, control.stderr)
	require.True(t, control.rep.Control)
	require.Zero(t, control.rep.Scenarios[0].ObservedHits)
	require.True(t, control.rep.Scenarios[0].HitsReported)

	// A mutated response stream is caught.
	proxy := mutatingProxy(t, srv.url, dir)
	mutated := verifyDoc(t, cmd, &llamaServer{url: proxy}, dir, model, "--run", `^(mixed-hits-misses|block-boundary-lengths)\.f32$`)
	require.Equal(t, 1, mutated.code, mutated.stderr)
	byName := map[string]*golden.ScenarioReport{}
	for _, s := range mutated.rep.Scenarios {
		byName[s.Name] = s
	}
	wrong := byName["mixed-hits-misses.f32"]
	require.Equal(t, golden.StatusFail, wrong.Status)
	for _, f := range wrong.Failures {
		require.Equal(t, "D", f.Request, "only the request given another prompt's block fails: %s", f.Message)
	}
	require.Contains(t, []string{golden.KindToken, golden.KindLogprob}, wrong.Failures[0].Kind)
	dropped := byName["block-boundary-lengths.f32"]
	require.Equal(t, golden.StatusFail, dropped.Status)
	require.Equal(t, golden.KindDropped, dropped.Failures[0].Kind, "%+v", dropped.Failures)
	require.Equal(t, "L33", dropped.Failures[0].Request)
	require.Contains(t, dropped.Failures[0].Message, "a dropped token")
	t.Logf("TestLlamaServerPassesTheDefaultSuite: %.1f s", time.Since(start).Seconds())
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// mutatingProxy is a reverse proxy to a llama-server that breaks two requests the way cache
// bugs do: request D of mixed-hits-misses.f32 has its second block of 16 prompt tokens
// replaced by the same positions of request C's prompt (the server computes D over a block
// that belongs to another request, as when a cached block is served to the wrong
// request), and the response to request L33 of block-boundary-lengths.f32 loses its 4th
// token (as after a faulty preemption).
func mutatingProxy(t *testing.T, target, dir string) string {
	t.Helper()
	mixed, err := golden.ReadGolden(filepath.Join(dir, "mixed-hits-misses.f32.json"))
	require.NoError(t, err)
	other := mixed.Request("C").PromptIDs
	u, err := url.Parse(strings.TrimSuffix(target, "/v1"))
	require.NoError(t, err)
	proxy := &httputil.ReverseProxy{}
	proxy.Rewrite = func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		r := pr.Out
		if r.URL.Path != "/v1/completions" {
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		if json.Unmarshal(body, &req) == nil && req["user"] == "kvref-golden:mixed-hits-misses.f32/D" {
			prompt := req["prompt"].([]any)
			for i := 16; i < 32; i++ {
				prompt[i] = other[i]
			}
			body, _ = json.Marshal(req)
		}
		if json.Unmarshal(body, &req) == nil && req["user"] == "kvref-golden:block-boundary-lengths.f32/L33" {
			r.Header.Set("X-Drop-Token", "3")
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		r.Header.Del("Content-Length")
	}
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Header.Get("X-Drop-Token") == "" {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		var r map[string]any
		if err := json.Unmarshal(body, &r); err != nil {
			return err
		}
		lp := r["choices"].([]any)[0].(map[string]any)["logprobs"].(map[string]any)
		content := lp["content"].([]any)
		lp["content"] = append(content[:3:3], content[4:]...)
		body, _ = json.Marshal(r)
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		resp.Header.Set("Content-Length", fmt.Sprint(len(body)))
		return nil
	}
	ts := httptest.NewServer(proxy)
	t.Cleanup(ts.Close)
	return ts.URL + "/v1"
}

// TestLlamaServerQuantizedCaches runs the documentation's f16 and q8_0 command lines. The
// f16 scenarios of stories260K pass against -ctk f16 -ctv f16 (llama.cpp also rounds Q,
// and the attention weights, to f16 there); the same goldens fail against a cache that is
// really bf16, whose saved dump fails again when verified offline, while the bf16
// scenarios pass against it. llama-server cannot store stories260K's 8-wide heads as q8_0,
// so q8_0 runs on a synthetic model with 64-wide heads: f32 first (the model's arithmetic
// agrees with kvref's), then q8_0 passes, and a q4_0 cache posing as q8_0 fails.
func TestLlamaServerQuantizedCaches(t *testing.T) {
	start := time.Now()
	bin, model, dir, cmds := llamaServerSetup(t)
	pass := func(run verifyRun) {
		t.Helper()
		require.Equal(t, 0, run.code, run.stderr)
		requireAllPass(t, run.rep, 2)
	}

	f16 := startLlamaServer(t, bin, cmds["f16"], model)
	pass(verifyDoc(t, cmds["f16"], f16, dir, model))
	f16.stop()

	bf16 := startLlamaServer(t, bin, cmds["f16"], model, "-ctk", "bf16", "-ctv", "bf16")
	broken := filepath.Join(t.TempDir(), "bf16-as-f16.jsonl")
	requireQuantizationFailure(t, verifyDoc(t, cmds["f16"], bf16, dir, model, "--save", broken))
	out, _, code := kvref(t, "verify", "--golden", dir, "--candidate", broken, "-m", model, "--cache-dtype", "f16", "--cache-model", "slots", "-t", "2")
	require.Equal(t, 1, code, "the broken candidate dump fails offline too:\n%s", out)
	require.Contains(t, out, "quantization error")
	pass(verifyDoc(t, cmds["f16"], bf16, dir, model, "--cache-dtype", "bf16"))
	bf16.stop()

	shape := synth.Shape{Name: "kvref-synthetic-head64", Dim: 128, Layers: 2, Heads: 2, KVHeads: 1, Hidden: 256, Context: 2048, RopeBase: 10000, Seed: 1}
	synthetic := asciiVocabModel(t, shape)
	sdir := t.TempDir()
	_, stderr, code := kvref(t, "golden", "--model", synthetic, "--out", sdir, "-t", "2",
		"--run", `^(mixed-hits-misses|block-boundary-lengths)\.(f32|q8_0)$`)
	require.Equal(t, 0, code, stderr)

	f32 := startLlamaServer(t, bin, cmds["f32"], synthetic)
	run := verifyDoc(t, cmds["f32"], f32, sdir, synthetic)
	pass(run)
	for _, s := range run.rep.Scenarios {
		require.Less(t, s.WorstError, 1e-4, "%s: the synthetic model's arithmetic is kvref's", s.Name)
	}
	f32.stop()

	q8 := startLlamaServer(t, bin, cmds["q8_0"], synthetic)
	pass(verifyDoc(t, cmds["q8_0"], q8, sdir, synthetic))
	q8.stop()

	q4 := startLlamaServer(t, bin, cmds["q8_0"], synthetic, "-ctk", "q4_0", "-ctv", "q4_0")
	requireQuantizationFailure(t, verifyDoc(t, cmds["q8_0"], q4, sdir, synthetic))
	t.Logf("TestLlamaServerQuantizedCaches: %.1f s", time.Since(start).Seconds())
}

// requireAllPass requires n scenarios, all passed.
func requireAllPass(t *testing.T, rep *golden.Report, n int) {
	t.Helper()
	require.True(t, rep.Passed)
	require.Len(t, rep.Scenarios, n)
	for _, s := range rep.Scenarios {
		require.Equal(t, golden.StatusPass, s.Status, "%s: %+v", s.Name, s.Failures)
	}
}

// requireQuantizationFailure requires the run to fail, every scenario on log-probabilities
// beyond the quantized tolerance (or tokens beyond the margin), and nothing else.
func requireQuantizationFailure(t *testing.T, run verifyRun) {
	t.Helper()
	require.Equal(t, 1, run.code, run.stderr)
	require.False(t, run.rep.Passed)
	for _, s := range run.rep.Scenarios {
		require.Equal(t, golden.StatusFail, s.Status, s.Name)
		for _, f := range s.Failures {
			require.Contains(t, []string{golden.KindLogprob, golden.KindToken}, f.Kind, f.Message)
		}
		i := slices.IndexFunc(s.Failures, func(f golden.Failure) bool { return f.Kind == golden.KindLogprob })
		require.GreaterOrEqual(t, i, 0, s.Name)
		require.Contains(t, s.Failures[i].Message, "quantization error")
	}
}
