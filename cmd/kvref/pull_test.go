package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/synth"
)

// testHub imitates the Hugging Face hub for kvref pull: the resolve endpoint answers LFS
// files with a 302 to a CDN server carrying X-Linked-Etag and X-Linked-Size, and unknown
// files with 404 EntryNotFound.
type testHub struct {
	mu       sync.Mutex
	files    map[string][]byte // "owner/repo/rev/path"
	requests int
}

func newTestHub(t *testing.T, files map[string][]byte) *testHub {
	t.Helper()
	h := &testHub{files: files}
	blobs := map[string][]byte{}
	for _, data := range files {
		sum := sha256.Sum256(data)
		blobs[hex.EncodeToString(sum[:])] = data
	}
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.count()
		data, ok := blobs[strings.TrimPrefix(r.URL.Path, "/blobs/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	}))
	t.Cleanup(cdn.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("/{owner}/{repo}/resolve/{rev}/{path...}", func(w http.ResponseWriter, r *http.Request) {
		h.count()
		data, ok := h.files[r.PathValue("owner")+"/"+r.PathValue("repo")+"/"+r.PathValue("rev")+"/"+r.PathValue("path")]
		if !ok {
			w.Header().Set("X-Error-Code", "EntryNotFound")
			http.Error(w, "Entry not found", http.StatusNotFound)
			return
		}
		sum := sha256.Sum256(data)
		sha := hex.EncodeToString(sum[:])
		w.Header().Set("X-Linked-Etag", strconv.Quote(sha))
		w.Header().Set("X-Linked-Size", strconv.Itoa(len(data)))
		http.Redirect(w, r, cdn.URL+"/blobs/"+sha, http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "")
	return h
}

func (h *testHub) count() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.requests++
}

func (h *testHub) seen() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests
}

func TestPullThenRun(t *testing.T) {
	model, err := synth.Tiny.Bytes()
	require.NoError(t, err)
	h := newTestHub(t, map[string][]byte{"kvref/tiny/main/models/tiny.gguf": model})
	dir := t.TempDir()

	out, stderr, code := kvref(t, "pull", "--cache", dir, "hf://kvref/tiny/models/tiny.gguf")
	require.Equal(t, 0, code, stderr)
	want := filepath.Join(dir, "hf", "kvref", "tiny", "main", "models", "tiny.gguf")
	require.Equal(t, want+"\n", out)
	require.Contains(t, stderr, "downloaded hf://kvref/tiny/models/tiny.gguf: ")
	require.Contains(t, stderr, "sha256 verified")
	got, err := os.ReadFile(want)
	require.NoError(t, err)
	require.Equal(t, model, got)
	require.Equal(t, 2, h.seen(), "one HEAD to the hub, one GET from the CDN")

	// Cached: the same path, no request, nothing on stderr.
	out, stderr, code = kvref(t, "pull", "--cache", dir, "hf://kvref/tiny/models/tiny.gguf")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, want+"\n", out)
	require.Empty(t, stderr)
	require.Equal(t, 2, h.seen())

	// The pulled file is a model kvref runs.
	text, stderr, code := kvref(t, "run", "-m", want, "-p", "hi", "-n", "4", "--temp", "0", "-t", "1")
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasPrefix(text, "hi"), text)
}

func TestPullFlagsAnywhereAndCacheFromEnvironment(t *testing.T) {
	data := []byte("not a model, just bytes")
	h := newTestHub(t, map[string][]byte{"o/r/v2/a.bin": data, "o/r/main/b.bin": data})
	dir := t.TempDir()
	t.Setenv("KVREF_CACHE", dir)

	out, stderr, code := kvref(t, "pull", "hf://o/r/a.bin@v2", "hf://o/r/b.bin")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, filepath.Join(dir, "hf", "o", "r", "v2", "a.bin")+"\n"+filepath.Join(dir, "hf", "o", "r", "main", "b.bin")+"\n", out)
	n := h.seen()

	out, stderr, code = kvref(t, "pull", "hf://o/r/a.bin@v2", "--force")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, filepath.Join(dir, "hf", "o", "r", "v2", "a.bin")+"\n", out)
	require.Equal(t, n+2, h.seen(), "--force downloads again")
}

func TestPullErrors(t *testing.T) {
	newTestHub(t, map[string][]byte{})
	dir := t.TempDir()

	out, stderr, code := kvref(t, "pull", "--cache", dir, "hf://o/r/missing.gguf")
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Equal(t, "kvref pull: hf://o/r/missing.gguf: file missing.gguf in o/r at main not found on the hub (HTTP 404 EntryNotFound): check the repo and path\n", stderr)

	_, stderr, code = kvref(t, "pull", "--cache", dir, "stories260K.gguf")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `"stories260K.gguf" is not a model reference: want hf://OWNER/REPO/PATH[@REV] or an http(s):// URL`)

	_, stderr, code = kvref(t, "pull", "--cache", dir, "hf://o/r")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "it names no file inside the repository")

	_, stderr, code = kvref(t, "pull")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "usage: kvref pull [--force] [--cache DIR] [--sha256 HEX] REF...")

	_, stderr, code = kvref(t, "pull", "--nope", "hf://o/r/m.gguf")
	require.Equal(t, 2, code)
	require.Equal(t, "kvref pull: unknown flag --nope; kvref pull --help lists the flags\n", stderr)

	_, stderr, code = kvref(t, "pull", "-h")
	require.Equal(t, 0, code)
	require.Contains(t, stderr, "HF_TOKEN")
	require.Contains(t, stderr, "-force")

	help, _, code := kvref(t, "help")
	require.Equal(t, 0, code)
	require.Contains(t, help, "pull      download a model file")
}

// TestPullWithAGivenChecksum: --sha256 is checked against the download and against a file
// already in the cache, and names one file only.
func TestPullWithAGivenChecksum(t *testing.T) {
	data := []byte("model bytes")
	newTestHub(t, map[string][]byte{"o/r/main/m.bin": data})
	dir := t.TempDir()
	sum := sha256.Sum256(data)
	good := hex.EncodeToString(sum[:])
	wrong := strings.Repeat("1", 64)

	_, stderr, code := kvref(t, "pull", "--cache", dir, "--sha256", wrong, "hf://o/r/m.bin")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "sha256 mismatch: expected "+wrong+" (given)")

	out, stderr, code := kvref(t, "pull", "--cache", dir, "--sha256", good, "hf://o/r/m.bin")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, filepath.Join(dir, "hf", "o", "r", "main", "m.bin")+"\n", out)

	_, stderr, code = kvref(t, "pull", "--cache", dir, "--sha256", wrong, "hf://o/r/m.bin")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "the cached file")
	require.Contains(t, stderr, "download it again with --force", "kvref pull names its flag")

	_, stderr, code = kvref(t, "pull", "--cache", dir, "--sha256", good, "hf://o/r/m.bin", "hf://o/r/n.bin")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "--sha256 names the checksum of one file")
}
