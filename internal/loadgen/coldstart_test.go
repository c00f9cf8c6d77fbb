package loadgen

import (
	"context"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHelperServer is not a test: run as a child process with LOADGEN_HELPER_PORT set, it
// is a server that answers /health with 503 for its first 50 ms, then 200, and streams
// completions as fakeServer does.
func TestHelperServer(t *testing.T) {
	port := os.Getenv("LOADGEN_HELPER_PORT")
	if port == "" {
		t.Skip("a helper process for TestMeasureColdStart, not a test")
	}
	start := time.Now()
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		if time.Since(start) < 50*time.Millisecond {
			http.Error(w, "loading", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	mux.Handle("/v1/completions", &fakeServer{gap: 10 * time.Millisecond})
	_ = http.ListenAndServe("127.0.0.1:"+port, mux)
	os.Exit(0)
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestMeasureColdStart: the server is ready no sooner than its health says so, the first
// token comes after its first gap, and the process is stopped afterwards (its port is
// free again).
func TestMeasureColdStart(t *testing.T) {
	port := freePort(t)
	t.Setenv("LOADGEN_HELPER_PORT", strconv.Itoa(port))
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	c := Config{URL: url, SharedTokens: 32, Vocab: 100}
	r, err := MeasureColdStart(context.Background(), c, []string{os.Args[0], "-test.run=^TestHelperServer$"})
	require.NoError(t, err)
	require.GreaterOrEqual(t, r.Ready, 0.05)
	require.GreaterOrEqual(t, r.TTFT, 0.01)
	require.InDelta(t, r.Ready+r.TTFT, r.FirstToken, 1e-12)
	require.Equal(t, 32, r.PromptLen)
	_, err = http.Get(url + "/health")
	require.Error(t, err, "the server was stopped")

	t.Setenv("LOADGEN_HELPER_PORT", "")
	_, err = MeasureColdStart(context.Background(), c, []string{"/bin/sh", "-c", "echo no model here >&2; exit 3"})
	require.ErrorContains(t, err, "exited before it was ready")
	require.ErrorContains(t, err, "no model here")
}

// TestMeasureColdStarts stops at the first failing start, saying which runs.
func TestMeasureColdStarts(t *testing.T) {
	var progress strings.Builder
	runs, err := MeasureColdStarts(context.Background(), Config{URL: "http://127.0.0.1:1", SharedTokens: 8, Vocab: 100},
		[]string{"/bin/sh", "-c", "exit 3"}, 3, &progress)
	require.ErrorContains(t, err, "exited before it was ready")
	require.Empty(t, runs)
	require.Equal(t, "kvref loadgen: cold start 1 of 3: /bin/sh -c exit 3\n", progress.String())
}

// TestWriteColdStarts: a row per run and the median first token.
func TestWriteColdStarts(t *testing.T) {
	var b strings.Builder
	WriteColdStarts(&b, []string{"srv", "-m", "x"}, []ColdStart{{Ready: 1, TTFT: 0.5, FirstToken: 1.5, PromptLen: 32}, {Ready: 2, TTFT: 0.5, FirstToken: 2.5, PromptLen: 32}, {Ready: 3, TTFT: 1, FirstToken: 4, PromptLen: 32}})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Len(t, lines, 6)
	require.Equal(t, "cold start of srv -m x", lines[0])
	require.Equal(t, "     2          2.000          0.500            2.500", lines[3])
	require.Equal(t, "median first token 2.500 s (process start to the first token of a 32-token prompt; ready: /health answers 200)", lines[5])
}
