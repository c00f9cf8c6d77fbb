// Package hub downloads model files from the Hugging Face hub, or from any http(s) URL, into
// a local cache.
//
// A reference names one file: hf://OWNER/REPO/PATH[@REV] (REV defaults to main; the
// HfFileSystem spelling hf://OWNER/REPO@REV/PATH is accepted too) or an http:// or https://
// URL. [Fetch] stores the file at a path derived from the reference alone, so a second Fetch
// of the same reference finds it without touching the network.
//
// Downloads work as huggingface_hub's do: a HEAD request to the resolve URL that does not
// follow the hub's redirect to its CDN, from which the X-Linked-Etag (the sha256 of an LFS
// file) and X-Linked-Size headers are read, then a GET of the redirect target. The body goes
// to PATH.part, an interrupted download resumes with a Range request, and the file is renamed
// into place only after its size and checksum have been verified.
package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/kvref/kvref/internal/cachedir"
)

// DefaultEndpoint is the hub address used when $HF_ENDPOINT is not set.
const DefaultEndpoint = "https://huggingface.co"

// DefaultRevision is the revision of an hf:// reference without @REV.
const DefaultRevision = "main"

// Source is a resolved reference: where to download the file and where to keep it.
type Source struct {
	// Ref is the reference as given.
	Ref string
	// URL is the address the download starts from: the hub's resolve URL for hf:// refs.
	URL string
	// Owner, Repo, Path and Revision name the file of an hf:// reference; they are empty for
	// URLs.
	Owner, Repo, Path, Revision string
	// Key is the file's place in the cache directory, slash-separated:
	// hf/OWNER/REPO/REV/PATH, or urls/HOST/PATH for URLs.
	Key string
}

// IsHub reports whether the source is a file on the hub (an hf:// reference).
func (s Source) IsHub() bool { return s.Owner != "" }

// Local returns the path of the cached file under cacheDir.
func (s Source) Local(cacheDir string) string {
	return filepath.Join(cacheDir, filepath.FromSlash(s.Key))
}

// IsRef reports whether s is a reference Fetch downloads (hf://, http:// or https://) rather
// than a local file name.
func IsRef(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "hf://") || strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// Endpoint returns the hub address: $HF_ENDPOINT without a trailing slash, or
// DefaultEndpoint.
func Endpoint() string {
	if e := strings.TrimRight(os.Getenv("HF_ENDPOINT"), "/"); e != "" {
		return e
	}
	return DefaultEndpoint
}

// DefaultCacheDir returns $KVREF_CACHE, or kvref under the user's cache directory.
func DefaultCacheDir() (string, error) { return cachedir.Default() }

// Resolve parses a reference and computes its download URL and cache key. The URL of an hf://
// reference is {endpoint}/{owner}/{repo}/resolve/{rev}/{path} with the endpoint from
// [Endpoint].
func Resolve(ref string) (Source, error) {
	switch l := strings.ToLower(ref); {
	case strings.HasPrefix(l, "hf://"):
		return resolveHub(ref, ref[len("hf://"):])
	case strings.HasPrefix(l, "http://"), strings.HasPrefix(l, "https://"):
		return resolveURL(ref)
	}
	return Source{}, fmt.Errorf("%q is not a model reference: want hf://OWNER/REPO/PATH[@REV] or an http(s):// URL", ref)
}

// hubForm is the accepted hf:// syntax, for error messages.
const hubForm = "hf://OWNER/REPO/PATH[@REV]"

func resolveHub(ref, rest string) (Source, error) {
	bad := func(format string, args ...any) (Source, error) {
		return Source{}, fmt.Errorf("bad reference %q (want %s): %s", ref, hubForm, fmt.Sprintf(format, args...))
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 3 || parts[2] == "" {
		return bad("it names no file inside the repository")
	}
	owner, repo, file := parts[0], parts[1], parts[2]
	rev := ""
	if i := strings.IndexByte(repo, '@'); i >= 0 { // hf://OWNER/REPO@REV/PATH
		repo, rev = repo[:i], repo[i+1:]
		if rev == "" {
			return bad("empty revision after @")
		}
	} else if i := strings.LastIndexByte(file, '@'); i >= 0 { // hf://OWNER/REPO/PATH@REV
		file, rev = file[:i], file[i+1:]
		if rev == "" {
			return bad("empty revision after @")
		}
	}
	if rev == "" {
		rev = DefaultRevision
	}
	for _, n := range []struct{ what, v string }{{"owner", owner}, {"repository", repo}} {
		if err := checkRepoName(n.v); err != nil {
			return bad("%s name %q %v", n.what, n.v, err)
		}
	}
	if err := checkPath(file); err != nil {
		return bad("file path %q %v", file, err)
	}
	if strings.ContainsAny(rev, "\\\x00") || strings.Contains("/"+rev+"/", "/../") {
		return bad("revision %q is not a branch, tag or commit name", rev)
	}
	// The revision is one path segment in both the URL and the cache ("refs/pr/1" becomes
	// "refs%2Fpr%2F1"), as huggingface_hub quotes it.
	escRev := url.PathEscape(rev)
	return Source{
		Ref:      ref,
		URL:      Endpoint() + "/" + owner + "/" + repo + "/resolve/" + escRev + "/" + escapePath(file),
		Owner:    owner,
		Repo:     repo,
		Path:     file,
		Revision: rev,
		Key:      path.Join("hf", owner, repo, escRev, file),
	}, nil
}

// checkRepoName accepts the names the hub allows for users, organisations and repositories.
func checkRepoName(s string) error {
	if s == "" {
		return errors.New("is empty")
	}
	if s == "." || s == ".." {
		return errors.New("is not a name")
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return fmt.Errorf("has %q (allowed: letters, digits, '-', '_', '.')", r)
		}
	}
	return nil
}

// checkPath accepts a slash-separated relative path that stays inside its directory.
func checkPath(p string) error {
	if strings.ContainsAny(p, "\\\x00") {
		return errors.New("has a backslash or NUL byte")
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "":
			return errors.New("has an empty segment (a leading, trailing or double slash)")
		case ".", "..":
			return fmt.Errorf("has a %q segment", seg)
		}
	}
	return nil
}

// escapePath escapes each segment of a slash-separated path for a URL.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func resolveURL(ref string) (Source, error) {
	u, err := url.Parse(ref)
	if err != nil {
		return Source{}, fmt.Errorf("bad URL %q: %w", ref, err)
	}
	if u.Host == "" || u.Hostname() == "" {
		return Source{}, fmt.Errorf("bad URL %q: no host", ref)
	}
	if u.User != nil {
		return Source{}, fmt.Errorf("bad URL %q: credentials in URLs are not supported (for the hub, set HF_TOKEN)", ref)
	}
	p := strings.TrimPrefix(u.Path, "/")
	if p == "" || strings.HasSuffix(p, "/") {
		return Source{}, fmt.Errorf("bad URL %q: it names no file", ref)
	}
	if err := checkPath(p); err != nil {
		return Source{}, fmt.Errorf("bad URL %q: path %v", ref, err)
	}
	// The host (with its port, ':' made '_' for Windows) and the path name the file; a query
	// string adds a directory of its own so that ?a and ?b are different files.
	host := strings.ToLower(strings.ReplaceAll(u.Host, ":", "_"))
	key := path.Join("urls", host, p)
	if u.RawQuery != "" {
		sum := sha256.Sum256([]byte(u.RawQuery))
		key = path.Join("urls", host, "query-"+hex.EncodeToString(sum[:6]), p)
	}
	u.Fragment, u.RawFragment = "", ""
	return Source{Ref: ref, URL: u.String(), Key: key}, nil
}
