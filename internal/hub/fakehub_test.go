package hub

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// hubFile is one file of the fake hub.
type hubFile struct {
	data []byte
	lfs  bool   // served through the CDN with X-Linked-Etag, like a git-lfs file
	etag string // overrides the checksum the hub announces (X-Linked-Etag or ETag)
	size string // overrides X-Linked-Size
}

// request is one request a fake server saw.
type request struct {
	server, method, path, rng, auth, encoding string
}

// fakeHub imitates the hub's resolve endpoint and the CDN its LFS redirects point to, as two
// servers on different ports (so on different hosts as far as URLs go).
type fakeHub struct {
	hub, cdn *httptest.Server

	mu    sync.Mutex
	files map[string]hubFile // "owner/repo/rev/path"
	seen  []request
	// cut, when positive, makes the next full (non-Range) CDN transfer stop after cut bytes
	// by dropping the connection.
	cut int
	// stall makes the CDN send the headers and cut bytes, then nothing.
	stall bool
}

func newFakeHub(t *testing.T) *fakeHub {
	t.Helper()
	h := &fakeHub{files: map[string]hubFile{}}
	h.cdn = httptest.NewServer(http.HandlerFunc(h.serveCDN))
	t.Cleanup(h.cdn.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("/{owner}/{repo}/resolve/{rev}/{path...}", h.serveResolve)
	h.hub = httptest.NewServer(mux)
	t.Cleanup(h.hub.Close)
	t.Setenv("HF_ENDPOINT", h.hub.URL)
	t.Setenv("HF_TOKEN", "")
	return h
}

// add puts a file in the fake hub at owner/repo/rev/path.
func (h *fakeHub) add(key string, f hubFile) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.files[key] = f
}

// requests returns what the servers have seen so far.
func (h *fakeHub) requests() []request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]request(nil), h.seen...)
}

// cdnGets returns the GET requests the CDN saw.
func (h *fakeHub) cdnGets() []request {
	var out []request
	for _, r := range h.requests() {
		if r.server == "cdn" && r.method == http.MethodGet {
			out = append(out, r)
		}
	}
	return out
}

func (h *fakeHub) record(server string, r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen = append(h.seen, request{server, r.Method, r.URL.Path, r.Header.Get("Range"), r.Header.Get("Authorization"), r.Header.Get("Accept-Encoding")})
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func gitSHA1Hex(b []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// serveResolve is {endpoint}/{owner}/{repo}/resolve/{rev}/{path}: a relative redirect for
// the renamed repository old/name, 403 GatedRepo for gated/repo without the token "good",
// 404 EntryNotFound for unknown files, a 302 to the CDN with X-Linked-Etag and
// X-Linked-Size for LFS files, and the file itself with its git blob sha1 as ETag otherwise.
func (h *fakeHub) serveResolve(w http.ResponseWriter, r *http.Request) {
	h.record("hub", r)
	owner, repo, rev, p := r.PathValue("owner"), r.PathValue("repo"), r.PathValue("rev"), r.PathValue("path")
	if owner == "old" && repo == "name" {
		http.Redirect(w, r, "/owner/repo/resolve/"+rev+"/"+p, http.StatusTemporaryRedirect)
		return
	}
	if owner == "gated" && r.Header.Get("Authorization") != "Bearer good" {
		w.Header().Set("X-Error-Code", "GatedRepo")
		w.Header().Set("X-Error-Message", "Access to model gated/repo is restricted.")
		http.Error(w, "gated", http.StatusForbidden)
		return
	}
	h.mu.Lock()
	f, ok := h.files[owner+"/"+repo+"/"+rev+"/"+p]
	h.mu.Unlock()
	if !ok {
		w.Header().Set("X-Error-Code", "EntryNotFound")
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	w.Header().Set("X-Repo-Commit", "0123456789abcdef0123456789abcdef01234567")
	if !f.lfs {
		etag := f.etag
		if etag == "" {
			etag = gitSHA1Hex(f.data)
		}
		w.Header().Set("ETag", strconv.Quote(etag))
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.data))
		return
	}
	sum := sha256Hex(f.data)
	etag, size := f.etag, f.size
	if etag == "" {
		etag = sum
	}
	if size == "" {
		size = strconv.Itoa(len(f.data))
	}
	h.mu.Lock()
	h.files["blob/"+sum] = f
	h.mu.Unlock()
	w.Header().Set("X-Linked-Etag", strconv.Quote(etag))
	w.Header().Set("X-Linked-Size", size)
	w.Header().Set("ETag", `"pointer-etag"`)
	http.Redirect(w, r, h.cdn.URL+"/blobs/"+sum, http.StatusFound)
}

// serveCDN serves /blobs/SHA256 with range support, cutting or stalling a transfer when
// asked to.
func (h *fakeHub) serveCDN(w http.ResponseWriter, r *http.Request) {
	h.record("cdn", r)
	h.mu.Lock()
	f, ok := h.files["blob/"+r.URL.Path[len("/blobs/"):]]
	cut, stall := h.cut, h.stall
	if cut > 0 && r.Header.Get("Range") == "" {
		h.cut = 0
	}
	h.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch {
	case stall:
		w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
		w.Write(f.data[:cut])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	case cut > 0 && r.Header.Get("Range") == "":
		w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
		w.Write(f.data[:cut])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drop the connection mid-body
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.data))
}

// pattern returns n deterministic bytes that differ between seeds.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}
