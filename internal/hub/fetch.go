package hub

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kvref/kvref/internal/digest"
)

// DefaultTimeout is how long Fetch waits for a server by default: for the HEAD request, for
// response headers, and for each pause in the body.
const DefaultTimeout = 30 * time.Second

// maxRedirects bounds the same-host redirects the HEAD request follows.
const maxRedirects = 10

// userAgent identifies kvref to the servers it downloads from.
const userAgent = "kvref (+https://github.com/kvref/kvref)"

// Options configure Fetch.
type Options struct {
	// CacheDir is the cache directory; empty means DefaultCacheDir().
	CacheDir string
	// Force downloads the file again even when it is already in the cache (discarding any
	// partial download); the cached copy is replaced only once the new one is verified.
	Force bool
	// Progress receives download progress: a live bar when it is a terminal, otherwise one
	// line when the download ends. Nil means no progress output.
	Progress io.Writer
	// Client makes the requests; nil means a client with connect and response-header
	// timeouts. Fetch never sets a whole-request timeout, which would cut large downloads.
	Client *http.Client
	// Timeout bounds the HEAD request and every wait for data during the download; zero
	// means DefaultTimeout.
	Timeout time.Duration
	// SHA256 is the file's checksum when the caller knows it (hex): a download must match
	// it as well as whatever the server announces, and a file already in the cache is
	// checked against it too.
	SHA256 string
}

// errStalled is the cause of a download cancelled because no data arrived in time.
var errStalled = errors.New("no data from the server")

// errRestart asks for the download to start again from byte 0.
var errRestart = errors.New("restart the download")

// Fetch makes sure the file named by ref is in the cache and returns its path. A file already
// cached is returned at once, without any request, unless opts.Force is set. Otherwise the
// file is downloaded to PATH.part (resuming what an earlier, interrupted Fetch left there),
// its size and checksum are verified when the server announces them, and PATH.part is renamed
// to PATH.
//
// $HF_ENDPOINT replaces the hub address (see [Endpoint]); $HF_TOKEN, when set, is sent as a
// bearer token, but only to the hub itself, never to the CDN it redirects to or to other
// hosts.
func Fetch(ctx context.Context, ref string, opts Options) (string, error) {
	src, err := Resolve(ref)
	if err != nil {
		return "", err
	}
	dir := opts.CacheDir
	if dir == "" {
		if dir, err = DefaultCacheDir(); err != nil {
			return "", err
		}
	}
	final := src.Local(dir)
	part := final + ".part"
	want := strings.ToLower(opts.SHA256)
	if want != "" {
		if len(want) != 64 || !isHex(want) {
			return "", fmt.Errorf("%s: the expected sha256 %q is not 64 hex digits", ref, opts.SHA256)
		}
	}
	if !opts.Force {
		if st, err := os.Stat(final); err == nil && st.Mode().IsRegular() {
			if want != "" {
				got, err := digest.File(final)
				if err != nil {
					return "", err
				}
				if got != want {
					return "", &StaleCacheError{Ref: ref, Path: final, Got: got, Want: want}
				}
			}
			return final, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", fmt.Errorf("cache directory: %w", err)
	}
	if opts.Force {
		if err := os.Remove(part); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	f := newFetcher(src, opts)
	r, err := f.head(ctx)
	if err != nil {
		return "", err
	}
	got, sum, err := f.download(ctx, r, part)
	if err != nil {
		return "", err
	}
	checked, err := f.verify(r, part, got, sum, want)
	if err != nil {
		return "", err
	}
	if err := os.Rename(part, final); err != nil {
		return "", fmt.Errorf("storing the download: %w", err)
	}
	// The sum of the bytes written names the model: opening it never reads it again for that.
	digest.Record(final, hex.EncodeToString(sum.Sum(nil)))
	f.prog.finish(got, checked)
	return final, nil
}

// fetcher carries one Fetch's settings.
type fetcher struct {
	src      Source
	client   *http.Client
	timeout  time.Duration
	token    string
	hubHost  string // host of the hub endpoint, the only host the token is sent to
	prog     *progress
	announce int64 // size the server announced for the GET, -1 if none
}

func newFetcher(src Source, opts Options) *fetcher {
	f := &fetcher{src: src, client: opts.Client, timeout: opts.Timeout, token: os.Getenv("HF_TOKEN"), announce: -1}
	if f.client == nil {
		f.client = defaultClient()
	}
	if f.timeout <= 0 {
		f.timeout = DefaultTimeout
	}
	if u, err := url.Parse(Endpoint()); err == nil {
		f.hubHost = strings.ToLower(u.Host)
	}
	f.prog = newProgress(opts.Progress, src.Ref)
	return f
}

// defaultClient is an http.Client with connect, TLS-handshake and response-header timeouts
// but no limit on the length of a download.
func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = DefaultTimeout
	return &http.Client{Transport: t}
}

// isHubHost reports whether u is on the hub endpoint's host.
func (f *fetcher) isHubHost(u *url.URL) bool {
	return f.hubHost != "" && strings.ToLower(u.Host) == f.hubHost
}

// newRequest builds a request with kvref's headers: no compression (sizes and byte ranges
// must be those of the file) and the token for the hub's own host.
func (f *fetcher) newRequest(ctx context.Context, method, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept-Encoding", "identity")
	if f.token != "" && f.isHubHost(req.URL) {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	return req, nil
}

// remote is what the HEAD request learnt about the file.
type remote struct {
	location string // the URL to GET: the CDN for LFS files
	size     int64  // -1 if unknown
	sha256   string // lowercase hex, "" if unknown
	gitSHA1  string // git blob sha1 (the ETag of a non-LFS hub file), "" if unknown
}

// head asks where and what the file is, as huggingface_hub's get_hf_file_metadata does: a
// HEAD request that follows redirects on the same host (a renamed repository) but not the
// redirect to another host (the CDN holding an LFS file), whose X-Linked-Etag and
// X-Linked-Size describe the file. A plain URL whose server refuses HEAD is fetched without
// metadata.
func (f *fetcher) head(ctx context.Context) (remote, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	noFollow := *f.client
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cur := f.src.URL
	for hop := 0; ; hop++ {
		if hop > maxRedirects {
			return remote{}, fmt.Errorf("%s: more than %d redirects", f.src.Ref, maxRedirects)
		}
		req, err := f.newRequest(ctx, http.MethodHead, cur)
		if err != nil {
			return remote{}, err
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			return remote{}, fmt.Errorf("%s: %w", f.src.Ref, f.netError(ctx, err))
		}
		resp.Body.Close()
		h := resp.Header
		switch loc := h.Get("Location"); {
		case resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "":
			target, err := req.URL.Parse(loc)
			if err != nil {
				return remote{}, fmt.Errorf("%s: bad redirect %q: %w", f.src.Ref, loc, err)
			}
			if target.Host == req.URL.Host && target.Scheme == req.URL.Scheme {
				cur = target.String()
				continue
			}
			r := remote{location: target.String(), size: parseSize(h.Get("X-Linked-Size"))}
			r.sha256, _ = checksum(h.Get("X-Linked-Etag"))
			return r, nil
		case resp.StatusCode >= 200 && resp.StatusCode < 300:
			r := remote{location: cur, size: parseSize(h.Get("X-Linked-Size"))}
			if r.size < 0 {
				r.size = parseSize(h.Get("Content-Length"))
			}
			if r.sha256, _ = checksum(h.Get("X-Linked-Etag")); r.sha256 == "" && f.isHubHost(req.URL) {
				// Only the hub's ETags are content hashes: sha256 for LFS files, the git
				// blob sha1 for the others.
				r.sha256, r.gitSHA1 = checksum(h.Get("ETag"))
			}
			return r, nil
		case !f.src.IsHub():
			// Servers may refuse HEAD (405, or 403 for URLs signed for GET only): the GET
			// will tell.
			return remote{location: cur, size: -1}, nil
		default:
			return remote{}, f.statusError(resp)
		}
	}
}

// checksum reads an ETag value: a 64-hex-digit one is a sha256, a 40-hex-digit one a git
// blob sha1. Weak and other ETags give neither.
func checksum(etag string) (sha256Hex, sha1Hex string) {
	if strings.HasPrefix(etag, "W/") {
		return "", ""
	}
	v := strings.ToLower(strings.Trim(strings.TrimSpace(etag), `"`))
	if !isHex(v) {
		return "", ""
	}
	switch len(v) {
	case 64:
		return v, ""
	case 40:
		return "", v
	}
	return "", ""
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// parseSize reads a byte count header, -1 when absent or malformed.
func parseSize(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// download brings PATH.part to the whole file and returns its size and sha256 state. When an
// earlier partial download does not fit what the server says, it starts again from byte 0,
// once.
func (f *fetcher) download(ctx context.Context, r remote, part string) (int64, hash.Hash, error) {
	for attempt := 0; ; attempt++ {
		n, h, err := f.tryDownload(ctx, r, part)
		if errors.Is(err, errRestart) && attempt == 0 {
			if err := os.Remove(part); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return 0, nil, err
			}
			continue
		}
		if errors.Is(err, errRestart) {
			return 0, nil, fmt.Errorf("%s: the server does not serve consistent byte ranges", f.src.Ref)
		}
		return n, h, err
	}
}

// tryDownload appends to PATH.part from its current size with a Range request, or writes it
// from the start when there is none or the server answers 200.
func (f *fetcher) tryDownload(ctx context.Context, r remote, part string) (int64, hash.Hash, error) {
	offset, err := fileSize(part)
	if err != nil {
		return 0, nil, err
	}
	if r.size >= 0 && offset > r.size {
		return 0, nil, errRestart
	}
	sum := sha256.New()
	if offset > 0 {
		if err := hashFile(part, sum); err != nil {
			return 0, nil, err
		}
		if offset == r.size { // complete from an earlier run: only verification is left
			return offset, sum, nil
		}
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(f.timeout, func() { cancel(errStalled) })
	defer timer.Stop()
	req, err := f.newRequest(ctx, http.MethodGet, r.location)
	if err != nil {
		return 0, nil, err
	}
	if offset > 0 {
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", f.src.Ref, f.netError(ctx, err))
	}
	defer resp.Body.Close()

	total := int64(-1)
	switch resp.StatusCode {
	case http.StatusPartialContent:
		start, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != offset {
			return 0, nil, errRestart
		}
		total = size
	case http.StatusOK:
		if offset > 0 { // the server ignored the Range header: start over
			offset = 0
			sum.Reset()
		}
		if resp.ContentLength >= 0 {
			total = resp.ContentLength
		}
	case http.StatusRequestedRangeNotSatisfiable:
		// Nothing lies past the end of .part: it is complete if its size is the file's.
		_, size, _ := parseContentRange(resp.Header.Get("Content-Range"))
		if offset > 0 && (size < 0 || size == offset) && (r.size < 0 || r.size == offset) {
			f.announce = size
			return offset, sum, nil
		}
		return 0, nil, errRestart
	default:
		return 0, nil, f.statusError(resp)
	}
	if total >= 0 && r.size >= 0 && total != r.size {
		os.Remove(part)
		return 0, nil, fmt.Errorf("%s: the download server sends %d bytes but the hub announced %d (did the file change? run again)",
			f.src.Ref, total, r.size)
	}
	f.announce = total

	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if offset == 0 {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	out, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return 0, nil, err
	}
	size := total
	if size < 0 {
		size = r.size
	}
	f.prog.begin(offset, size)
	buf := make([]byte, 256<<10)
	n, err := io.CopyBuffer(io.MultiWriter(out, sum, f.prog), &watchdog{r: resp.Body, timer: timer, d: f.timeout}, buf)
	cerr := out.Close()
	got := offset + n
	if err != nil {
		f.prog.abort()
		return 0, nil, fmt.Errorf("%s: download interrupted after %s of %s (%s keeps it: run again to resume): %w",
			f.src.Ref, humanBytes(got), sizeText(size), part, f.netError(ctx, err))
	}
	if cerr != nil {
		return 0, nil, cerr
	}
	return got, sum, nil
}

// watchdog re-arms timer whenever data arrives, so that a download is cancelled only when
// the server stays silent for d.
type watchdog struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (w *watchdog) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if n > 0 {
		w.timer.Reset(w.d)
	}
	return n, err
}

// parseContentRange reads "bytes START-END/SIZE" or "bytes */SIZE"; size is -1 for "*".
func parseContentRange(s string) (start, size int64, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(s), "bytes ")
	if !found {
		return 0, -1, false
	}
	rng, sz, found := strings.Cut(rest, "/")
	if !found {
		return 0, -1, false
	}
	size = -1
	if sz != "*" {
		if size = parseSize(sz); size < 0 {
			return 0, -1, false
		}
	}
	if rng == "*" {
		return 0, size, true
	}
	first, _, found := strings.Cut(rng, "-")
	if start = parseSize(first); !found || start < 0 {
		return 0, size, false
	}
	return start, size, true
}

// fileSize is the size of the file at p, 0 if there is none.
func fileSize(p string) (int64, error) {
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// hashFile feeds the file at p into h.
func hashFile(p string, h hash.Hash) error {
	in, err := os.Open(p)
	if err != nil {
		return err
	}
	defer in.Close()
	_, err = io.Copy(h, in)
	return err
}

// gitBlobSHA1 is git's object id of the file at p: sha1("blob SIZE\x00" + content).
func gitBlobSHA1(p string, size int64) (string, error) {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", size)
	if err := hashFile(p, h); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// verify checks the downloaded size and checksum against what the servers announced and
// what the caller expects (want, "" if nothing), and says what was checked. On a mismatch it
// deletes PATH.part.
func (f *fetcher) verify(r remote, part string, got int64, sum hash.Hash, want string) (string, error) {
	fail := func(format string, args ...any) (string, error) {
		os.Remove(part)
		return "", fmt.Errorf("%s: %s; the download was deleted: run again", f.src.Ref, fmt.Sprintf(format, args...))
	}
	for _, want := range []int64{r.size, f.announce} {
		if want >= 0 && got != want {
			return fail("size mismatch: expected %d bytes, got %d", want, got)
		}
	}
	actual := hex.EncodeToString(sum.Sum(nil))
	if want != "" && actual != want {
		return fail("sha256 mismatch: expected %s (given), got %s", want, actual)
	}
	switch {
	case r.sha256 != "":
		if actual != r.sha256 {
			return fail("sha256 mismatch: expected %s, got %s", r.sha256, actual)
		}
		return "sha256 verified", nil
	case want != "":
		return "sha256 verified against the checksum given", nil
	case r.gitSHA1 != "":
		actual, err := gitBlobSHA1(part, got)
		if err != nil {
			return "", err
		}
		if actual != r.gitSHA1 {
			return fail("git blob sha1 mismatch: expected %s, got %s", r.gitSHA1, actual)
		}
		return "git blob sha1 verified", nil
	}
	return "sha256 " + hex.EncodeToString(sum.Sum(nil)) + " (the server announced no checksum)", nil
}

// netError explains a failed request, naming a stall or timeout as such.
func (f *fetcher) netError(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errStalled) {
		return fmt.Errorf("%w for %v", errStalled, f.timeout)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w for %v: %w", errStalled, f.timeout, err)
	}
	return err
}

// statusError turns an error status into a message that says what to do, using the hub's
// X-Error-Code (RepoNotFound, RevisionNotFound, EntryNotFound, GatedRepo) when present.
func (f *fetcher) statusError(resp *http.Response) error {
	code := resp.Header.Get("X-Error-Code")
	status := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if code != "" {
		status += " " + code
	}
	if msg := resp.Header.Get("X-Error-Message"); msg != "" {
		status += ": " + msg
	}
	fromHub := f.isHubHost(resp.Request.URL)
	s := f.src
	repo := s.Owner + "/" + s.Repo
	switch {
	case resp.StatusCode == http.StatusNotFound && fromHub:
		what := "the file"
		switch code {
		case "RepoNotFound":
			what = "repository " + repo
		case "RevisionNotFound":
			what = "revision " + s.Revision + " of " + repo
		case "EntryNotFound":
			what = "file " + s.Path + " in " + repo + " at " + s.Revision
		}
		if !s.IsHub() {
			what = "the file"
		}
		return fmt.Errorf("%s: %s not found on the hub (%s): check the repo and path", s.Ref, what, status)
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("%s: not found (%s from %s)", s.Ref, status, resp.Request.URL.Host)
	case (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) && fromHub:
		switch {
		case code == "GatedRepo":
			return fmt.Errorf("%s: access denied (%s): %s is a gated repo: accept its conditions on its hub page, then set HF_TOKEN to an access token of that account", s.Ref, status, repo)
		case f.token == "":
			return fmt.Errorf("%s: access denied (%s): the repo is private or gated, or does not exist: set HF_TOKEN to an access token that can read it, and check the repo and path", s.Ref, status)
		}
		return fmt.Errorf("%s: access denied (%s): the HF_TOKEN given was refused: check that it can read the repo (a gated repo needs its conditions accepted) and that the repo and path are right", s.Ref, status)
	}
	return fmt.Errorf("%s: %s from %s", s.Ref, status, resp.Request.URL.Host)
}
