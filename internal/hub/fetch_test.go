package hub

import (
	"bytes"
	"context"
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
)

// fetch runs Fetch into a fresh cache directory unless dir is given, with progress captured.
func fetch(t *testing.T, ref, dir string, opts Options) (string, string, error) {
	t.Helper()
	var prog bytes.Buffer
	opts.CacheDir = dir
	opts.Progress = &prog
	p, err := Fetch(context.Background(), ref, opts)
	return p, prog.String(), err
}

// noFiles asserts that nothing but directories exists under dir.
func noFiles(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		require.Falsef(t, err == nil && !d.IsDir(), "unexpected file %s", p)
		return err
	}))
}

func TestFetchLFSFileThroughTheCDN(t *testing.T) {
	h := newFakeHub(t)
	data := pattern(300_000, 1)
	h.add("owner/repo/main/dir/model.gguf", hubFile{data: data, lfs: true})
	dir := t.TempDir()

	p, prog, err := fetch(t, "hf://owner/repo/dir/model.gguf", dir, Options{})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "hf", "owner", "repo", "main", "dir", "model.gguf"), p)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got), "downloaded bytes differ")
	require.NoFileExists(t, p+".part")
	require.Contains(t, prog, "downloaded hf://owner/repo/dir/model.gguf: 293.0 KiB")
	require.Contains(t, prog, "sha256 verified")
	require.NotContains(t, prog, "\r", "no live bar when progress is not a terminal")

	// HEAD to the hub without following its redirect, then GET straight from the CDN.
	reqs := h.requests()
	require.Len(t, reqs, 2)
	require.Equal(t, request{server: "hub", method: "HEAD", path: "/owner/repo/resolve/main/dir/model.gguf", encoding: "identity"}, reqs[0])
	require.Equal(t, request{server: "cdn", method: "GET", path: "/blobs/" + sha256Hex(data), encoding: "identity"}, reqs[1])
}

func TestFetchCachedFileMakesNoRequest(t *testing.T) {
	h := newFakeHub(t)
	data := pattern(1000, 2)
	h.add("owner/repo/main/m.gguf", hubFile{data: data, lfs: true})
	dir := t.TempDir()
	first, _, err := fetch(t, "hf://owner/repo/m.gguf", dir, Options{})
	require.NoError(t, err)
	n := len(h.requests())

	again, prog, err := fetch(t, "hf://owner/repo/m.gguf", dir, Options{})
	require.NoError(t, err)
	require.Equal(t, first, again)
	require.Len(t, h.requests(), n, "a cached file needs no request")
	require.Empty(t, prog)

	// --force downloads again and replaces the file.
	require.NoError(t, os.WriteFile(first, []byte("stale"), 0o644))
	forced, _, err := fetch(t, "hf://owner/repo/m.gguf", dir, Options{Force: true})
	require.NoError(t, err)
	require.Equal(t, first, forced)
	require.Len(t, h.requests(), n+2)
	got, err := os.ReadFile(forced)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got))
}

func TestFetchResumesATruncatedDownload(t *testing.T) {
	h := newFakeHub(t)
	data := pattern(200_000, 3)
	h.add("owner/repo/main/m.gguf", hubFile{data: data, lfs: true})
	h.cut = 77_777
	dir := t.TempDir()
	final := filepath.Join(dir, "hf", "owner", "repo", "main", "m.gguf")

	_, _, err := fetch(t, "hf://owner/repo/m.gguf", dir, Options{})
	require.Error(t, err)
	require.Contains(t, err.Error(), "interrupted after 76.0 KiB of 195.3 KiB")
	require.Contains(t, err.Error(), "run again to resume")
	require.NoFileExists(t, final)
	part, err := os.ReadFile(final + ".part")
	require.NoError(t, err)
	require.True(t, bytes.Equal(data[:77_777], part), "the .part holds the bytes received")

	p, prog, err := fetch(t, "hf://owner/repo/m.gguf", dir, Options{})
	require.NoError(t, err)
	require.Equal(t, final, p)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, sha256Hex(data), sha256Hex(got))
	require.NoFileExists(t, final+".part")
	require.Contains(t, prog, "resumed at 76.0 KiB, sha256 verified")

	gets := h.cdnGets()
	require.Len(t, gets, 2)
	require.Empty(t, gets[0].rng)
	require.Equal(t, "bytes=77777-", gets[1].rng)
}

func TestFetchSHA256Mismatch(t *testing.T) {
	h := newFakeHub(t)
	data := pattern(5000, 4)
	claimed := sha256Hex(pattern(5000, 5))
	h.add("owner/repo/main/m.gguf", hubFile{data: data, lfs: true, etag: claimed})
	dir := t.TempDir()

	_, _, err := fetch(t, "hf://owner/repo/m.gguf", dir, Options{})
	require.Error(t, err)
	require.Contains(t, err.Error(), "sha256 mismatch: expected "+claimed+", got "+sha256Hex(data))
	require.Contains(t, err.Error(), "the download was deleted")
	noFiles(t, dir)
}

func TestFetchSizeMismatch(t *testing.T) {
	h := newFakeHub(t)
	h.add("owner/repo/main/m.gguf", hubFile{data: pattern(5000, 6), lfs: true, size: "5001"})
	dir := t.TempDir()
	_, _, err := fetch(t, "hf://owner/repo/m.gguf", dir, Options{})
	require.Error(t, err)
	require.Contains(t, err.Error(), "sends 5000 bytes but the hub announced 5001")
	noFiles(t, dir)
}

func TestFetchNotFound(t *testing.T) {
	newFakeHub(t)
	dir := t.TempDir()
	_, _, err := fetch(t, "hf://owner/repo/missing.gguf@v1", dir, Options{})
	require.Error(t, err)
	require.EqualError(t, err, "hf://owner/repo/missing.gguf@v1: file missing.gguf in owner/repo at v1 not found on the hub (HTTP 404 EntryNotFound): check the repo and path")
	noFiles(t, dir)
}

func TestFetchGatedRepoNeedsHFToken(t *testing.T) {
	h := newFakeHub(t)
	data := pattern(4096, 7)
	h.add("gated/repo/main/m.gguf", hubFile{data: data, lfs: true})

	_, _, err := fetch(t, "hf://gated/repo/m.gguf", t.TempDir(), Options{})
	require.Error(t, err)
	require.Contains(t, err.Error(), "access denied (HTTP 403 GatedRepo: Access to model gated/repo is restricted.)")
	require.Contains(t, err.Error(), "gated/repo is a gated repo")
	require.Contains(t, err.Error(), "set HF_TOKEN")

	t.Setenv("HF_TOKEN", "wrong")
	_, _, err = fetch(t, "hf://gated/repo/m.gguf", t.TempDir(), Options{})
	require.Error(t, err)
	require.Contains(t, err.Error(), "HTTP 403")

	t.Setenv("HF_TOKEN", "good")
	p, _, err := fetch(t, "hf://gated/repo/m.gguf", t.TempDir(), Options{})
	require.NoError(t, err)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.True(t, bytes.Equal(data, got))
	// The token goes to the hub only, never to the CDN.
	reqs := h.requests()
	last := reqs[len(reqs)-2:]
	require.Equal(t, "hub", last[0].server)
	require.Equal(t, "Bearer good", last[0].auth)
	require.Equal(t, "cdn", last[1].server)
	require.Empty(t, last[1].auth)
}

func TestFetchUnauthorizedWithoutToken(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Error-Code", "RepoNotFound")
		http.Error(w, "Invalid username or password.", http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("HF_ENDPOINT", srv.URL)
	t.Setenv("HF_TOKEN", "")
	_, _, err := fetch(t, "hf://private/repo/m.gguf", t.TempDir(), Options{})
	require.Error(t, err)
	require.Contains(t, err.Error(), "HTTP 401 RepoNotFound")
	require.Contains(t, err.Error(), "private or gated, or does not exist: set HF_TOKEN")
}

func TestFetchSmallFileVerifiesGitBlobSHA1(t *testing.T) {
	h := newFakeHub(t)
	data := []byte(`{"architectures": ["LlamaForCausalLM"]}` + "\n")
	h.add("owner/repo/main/config.json", hubFile{data: data})
	dir := t.TempDir()
	p, prog, err := fetch(t, "hf://owner/repo/config.json", dir, Options{})
	require.NoError(t, err)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, data, got)
	require.Contains(t, prog, "git blob sha1 verified")
	for _, r := range h.requests() {
		require.Equal(t, "hub", r.server, "a non-LFS file comes from the hub itself")
	}

	h.add("owner/repo/main/bad.json", hubFile{data: data, etag: strings.Repeat("ab", 20)})
	_, _, err = fetch(t, "hf://owner/repo/bad.json", dir, Options{})
	require.Error(t, err)
	require.Contains(t, err.Error(), "git blob sha1 mismatch: expected "+strings.Repeat("ab", 20)+", got "+gitSHA1Hex(data))
	require.NoFileExists(t, filepath.Join(dir, "hf", "owner", "repo", "main", "bad.json.part"))
}

func TestFetchFollowsARenamedRepository(t *testing.T) {
	h := newFakeHub(t)
	data := pattern(2048, 8)
	h.add("owner/repo/main/m.gguf", hubFile{data: data, lfs: true})
	dir := t.TempDir()
	p, _, err := fetch(t, "hf://old/name/m.gguf", dir, Options{})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "hf", "old", "name", "main", "m.gguf"), p)
	var paths []string
	for _, r := range h.requests() {
		paths = append(paths, r.server+" "+r.method+" "+r.path)
	}
	require.Equal(t, []string{
		"hub HEAD /old/name/resolve/main/m.gguf",
		"hub HEAD /owner/repo/resolve/main/m.gguf",
		"cdn GET /blobs/" + sha256Hex(data),
	}, paths)
}

func TestFetchRevision(t *testing.T) {
	h := newFakeHub(t)
	h.add("owner/repo/refs/pr/1/m.gguf", hubFile{data: pattern(100, 9), lfs: true})
	h.add("owner/repo/v2/m.gguf", hubFile{data: pattern(100, 10), lfs: true})
	dir := t.TempDir()

	p, _, err := fetch(t, "hf://owner/repo/m.gguf@v2", dir, Options{})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "hf", "owner", "repo", "v2", "m.gguf"), p)

	p, _, err = fetch(t, "hf://owner/repo/m.gguf@refs/pr/1", dir, Options{})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "hf", "owner", "repo", "refs%2Fpr%2F1", "m.gguf"), p)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, pattern(100, 9), got)
}

// plainServer serves one file at /files/model.bin and records the Range headers it sees. With
// noHead it refuses HEAD; with noRange it ignores Range and always sends the whole file.
type plainServer struct {
	data            []byte
	noHead, noRange bool
	mu              sync.Mutex
	ranges          []string
	auth            []string
}

func (s *plainServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.ranges = append(s.ranges, r.Method+" "+r.Header.Get("Range"))
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.mu.Unlock()
	switch {
	case r.URL.Path != "/files/model.bin":
		http.NotFound(w, r)
	case s.noHead && r.Method == http.MethodHead:
		http.Error(w, "no HEAD here", http.StatusMethodNotAllowed)
	case s.noRange:
		w.Header().Set("Content-Length", strconv.Itoa(len(s.data)))
		w.Write(s.data)
	default:
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(s.data))
	}
}

func TestFetchPlainHTTPSURL(t *testing.T) {
	t.Setenv("HF_ENDPOINT", "https://hub.invalid")
	t.Setenv("HF_TOKEN", "secret")
	s := &plainServer{data: pattern(10_000, 11)}
	srv := httptest.NewTLSServer(s)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	ref := srv.URL + "/files/model.bin"

	p, prog, err := fetch(t, ref, dir, Options{Client: srv.Client()})
	require.NoError(t, err)
	host := strings.ReplaceAll(strings.TrimPrefix(srv.URL, "https://"), ":", "_")
	require.Equal(t, filepath.Join(dir, "urls", host, "files", "model.bin"), p)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, s.data, got)
	require.Contains(t, prog, "sha256 "+sha256Hex(s.data)+" (the server announced no checksum)")
	require.Equal(t, []string{"", ""}, s.auth, "HF_TOKEN is for the hub only")

	_, _, err = fetch(t, srv.URL+"/files/other.bin", dir, Options{Client: srv.Client()})
	require.Error(t, err)
	require.Contains(t, err.Error(), "/files/other.bin: not found (HTTP 404 from 127.0.0.1:")
}

func TestFetchStartsOverWhenRangeIsIgnored(t *testing.T) {
	s := &plainServer{data: pattern(10_000, 12), noRange: true}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	t.Setenv("HF_ENDPOINT", "https://hub.invalid")
	ref := srv.URL + "/files/model.bin"
	src, err := Resolve(ref)
	require.NoError(t, err)
	dir := t.TempDir()
	final := src.Local(dir)
	require.NoError(t, os.MkdirAll(filepath.Dir(final), 0o755))
	require.NoError(t, os.WriteFile(final+".part", []byte("garbage that is not the file's start"), 0o644))

	p, _, err := fetch(t, ref, dir, Options{})
	require.NoError(t, err)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, s.data, got)
	require.Equal(t, []string{"HEAD ", "GET bytes=36-"}, s.ranges)
}

func TestFetchRange416MeansComplete(t *testing.T) {
	s := &plainServer{data: pattern(10_000, 13), noHead: true}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	t.Setenv("HF_ENDPOINT", "https://hub.invalid")
	ref := srv.URL + "/files/model.bin"
	src, err := Resolve(ref)
	require.NoError(t, err)
	dir := t.TempDir()
	final := src.Local(dir)
	require.NoError(t, os.MkdirAll(filepath.Dir(final), 0o755))
	require.NoError(t, os.WriteFile(final+".part", s.data, 0o644))

	p, prog, err := fetch(t, ref, dir, Options{})
	require.NoError(t, err)
	require.Equal(t, final, p)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, s.data, got)
	require.Equal(t, []string{"HEAD ", "GET bytes=10000-"}, s.ranges)
	require.Contains(t, prog, "completed by an earlier run")
}

func TestFetchCompletePartNeedsOnlyHEAD(t *testing.T) {
	h := newFakeHub(t)
	data := pattern(3000, 14)
	h.add("owner/repo/main/m.gguf", hubFile{data: data, lfs: true})
	dir := t.TempDir()
	final := filepath.Join(dir, "hf", "owner", "repo", "main", "m.gguf")
	require.NoError(t, os.MkdirAll(filepath.Dir(final), 0o755))
	require.NoError(t, os.WriteFile(final+".part", data, 0o644))

	p, prog, err := fetch(t, "hf://owner/repo/m.gguf", dir, Options{})
	require.NoError(t, err)
	require.Equal(t, final, p)
	require.Contains(t, prog, "completed by an earlier run), sha256 verified")
	require.Empty(t, h.cdnGets())
}

func TestFetchOversizedPartStartsOver(t *testing.T) {
	h := newFakeHub(t)
	data := pattern(3000, 15)
	h.add("owner/repo/main/m.gguf", hubFile{data: data, lfs: true})
	dir := t.TempDir()
	final := filepath.Join(dir, "hf", "owner", "repo", "main", "m.gguf")
	require.NoError(t, os.MkdirAll(filepath.Dir(final), 0o755))
	require.NoError(t, os.WriteFile(final+".part", pattern(4000, 16), 0o644))

	p, _, err := fetch(t, "hf://owner/repo/m.gguf", dir, Options{})
	require.NoError(t, err)
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, data, got)
	gets := h.cdnGets()
	require.Len(t, gets, 1)
	require.Empty(t, gets[0].rng)
}

func TestFetchStalledTransfer(t *testing.T) {
	h := newFakeHub(t)
	data := pattern(50_000, 17)
	h.add("owner/repo/main/m.gguf", hubFile{data: data, lfs: true})
	h.cut, h.stall = 1000, true
	dir := t.TempDir()

	_, _, err := fetch(t, "hf://owner/repo/m.gguf", dir, Options{Timeout: 250 * time.Millisecond})
	require.Error(t, err)
	require.Contains(t, err.Error(), "interrupted after 1000 B of 48.8 KiB")
	require.Contains(t, err.Error(), "no data from the server for 250ms")
	part, err := os.ReadFile(filepath.Join(dir, "hf", "owner", "repo", "main", "m.gguf.part"))
	require.NoError(t, err)
	require.Len(t, part, 1000)
}

func TestFetchCancelledContext(t *testing.T) {
	h := newFakeHub(t)
	h.add("owner/repo/main/m.gguf", hubFile{data: pattern(1000, 18), lfs: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Fetch(ctx, "hf://owner/repo/m.gguf", Options{CacheDir: t.TempDir()})
	require.ErrorIs(t, err, context.Canceled)
}

func TestFetchDefaultCacheDir(t *testing.T) {
	h := newFakeHub(t)
	h.add("owner/repo/main/m.gguf", hubFile{data: pattern(10, 19), lfs: true})
	dir := t.TempDir()
	t.Setenv("KVREF_CACHE", dir)
	p, err := Fetch(context.Background(), "hf://owner/repo/m.gguf", Options{})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "hf", "owner", "repo", "main", "m.gguf"), p)
}
