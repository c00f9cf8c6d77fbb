package hub

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIsRef(t *testing.T) {
	t.Parallel()

	for s, want := range map[string]bool{
		"hf://ggml-org/models/tinyllamas/stories260K.gguf": true,
		"HF://o/r/f":                        true,
		"https://example.com/m.gguf":        true,
		"http://127.0.0.1:8080/m.gguf":      true,
		"stories260K.gguf":                  false,
		"/models/stories260K.gguf":          false,
		"":                                  false,
		"hf:/o/r/f":                         false,
		"ftp://example.com/m.gguf":          false,
		"models/https://not-a-url/m.gguf":   false,
		"./hf://relative-dir/weird-name.gg": false,
	} {
		require.Equal(t, want, IsRef(s), s)
	}
}

func TestResolveHub(t *testing.T) {
	t.Setenv("HF_ENDPOINT", "")
	for _, tc := range []struct {
		ref, url, key, owner, repo, path, rev string
	}{
		{"hf://ggml-org/models/tinyllamas/stories260K.gguf",
			"https://huggingface.co/ggml-org/models/resolve/main/tinyllamas/stories260K.gguf",
			"hf/ggml-org/models/main/tinyllamas/stories260K.gguf", "ggml-org", "models", "tinyllamas/stories260K.gguf", "main"},
		{"hf://o/r/m.gguf@v1.0",
			"https://huggingface.co/o/r/resolve/v1.0/m.gguf", "hf/o/r/v1.0/m.gguf", "o", "r", "m.gguf", "v1.0"},
		{"hf://o/r/m.gguf@refs/pr/1",
			"https://huggingface.co/o/r/resolve/refs%2Fpr%2F1/m.gguf", "hf/o/r/refs%2Fpr%2F1/m.gguf", "o", "r", "m.gguf", "refs/pr/1"},
		{"hf://o/r@0123abc/sub/m.gguf",
			"https://huggingface.co/o/r/resolve/0123abc/sub/m.gguf", "hf/o/r/0123abc/sub/m.gguf", "o", "r", "sub/m.gguf", "0123abc"},
		{"hf://o/r/with space#and?.gguf",
			"https://huggingface.co/o/r/resolve/main/with%20space%23and%3F.gguf", "hf/o/r/main/with space#and?.gguf", "o", "r", "with space#and?.gguf", "main"},
	} {
		s, err := Resolve(tc.ref)
		require.NoError(t, err, tc.ref)
		require.Equal(t, Source{Ref: tc.ref, URL: tc.url, Key: tc.key, Owner: tc.owner, Repo: tc.repo, Path: tc.path, Revision: tc.rev}, s)
		require.True(t, s.IsHub())
	}

	t.Setenv("HF_ENDPOINT", "http://mirror.example:8080/")
	s, err := Resolve("hf://o/r/m.gguf")
	require.NoError(t, err)
	require.Equal(t, "http://mirror.example:8080/o/r/resolve/main/m.gguf", s.URL)
	require.Equal(t, filepath.Join("cache", "hf", "o", "r", "main", "m.gguf"), s.Local("cache"))
}

func TestResolveURL(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct{ ref, url, key string }{
		{"https://example.com/a/b/m.gguf", "https://example.com/a/b/m.gguf", "urls/example.com/a/b/m.gguf"},
		{"http://127.0.0.1:8080/m.gguf#frag", "http://127.0.0.1:8080/m.gguf", "urls/127.0.0.1_8080/m.gguf"},
		{"HTTPS://Example.COM/M.gguf", "https://Example.COM/M.gguf", "urls/example.com/M.gguf"},
		{"https://example.com/m.gguf?download=true", "https://example.com/m.gguf?download=true", "urls/example.com/query-4e7f534bcbf5/m.gguf"},
		{"https://example.com/a%20b.gguf", "https://example.com/a%20b.gguf", "urls/example.com/a b.gguf"},
	} {
		s, err := Resolve(tc.ref)
		require.NoError(t, err, tc.ref)
		require.Equal(t, Source{Ref: tc.ref, URL: tc.url, Key: tc.key}, s, tc.ref)
		require.False(t, s.IsHub())
	}
}

func TestResolveRejects(t *testing.T) {
	t.Parallel()

	for ref, msg := range map[string]string{
		"model.gguf":                        "is not a model reference",
		"hf://o":                            "names no file",
		"hf://o/r":                          "names no file",
		"hf://o/r/":                         "names no file",
		"hf://o/r/m.gguf@":                  "empty revision",
		"hf://o/r@/m.gguf":                  "empty revision",
		"hf:///r/m.gguf":                    "owner name \"\" is empty",
		"hf://o/../m.gguf":                  "repository name \"..\" is not a name",
		"hf://o w/r/m.gguf":                 "owner name \"o w\" has ' '",
		"hf://o/r/a/../../../../etc/passwd": "has a \"..\" segment",
		"hf://o/r/a//b":                     "empty segment",
		"hf://o/r/a\\b":                     "backslash",
		"hf://o/r/m.gguf@../x":              "is not a branch",
		"https://":                          "no host",
		"https://example.com":               "names no file",
		"https://example.com/dir/":          "names no file",
		"https://example.com/a/../../x":     "has a \"..\" segment",
		"https://user:pw@example.com/m":     "credentials in URLs",
	} {
		_, err := Resolve(ref)
		require.Error(t, err, ref)
		require.Contains(t, err.Error(), msg, ref)
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("KVREF_CACHE", "/somewhere/kv")
	d, err := DefaultCacheDir()
	require.NoError(t, err)
	require.Equal(t, "/somewhere/kv", d)

	t.Setenv("KVREF_CACHE", "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	t.Setenv("HOME", "/home/u")
	d, err = DefaultCacheDir()
	require.NoError(t, err)
	if base, err := os.UserCacheDir(); err == nil {
		require.Equal(t, filepath.Join(base, "kvref"), d)
	}
}

func TestChecksum(t *testing.T) {
	t.Parallel()

	sha := "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	for etag, want := range map[string][2]string{
		`"` + sha + `"`: {sha, ""},
		sha:             {sha, ""},
		`"9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"`: {sha, ""},
		`"0123456789abcdef0123456789abcdef01234567"`:                         {"", "0123456789abcdef0123456789abcdef01234567"},
		`W/"` + sha + `"`:                    {"", ""},
		`"d41d8cd98f00b204e9800998ecf8427e"`: {"", ""}, // an MD5 (S3)
		`"xyz"`:                              {"", ""},
		"":                                   {"", ""},
	} {
		s256, s1 := checksum(etag)
		require.Equal(t, want, [2]string{s256, s1}, etag)
	}
}

func TestParseContentRange(t *testing.T) {
	t.Parallel()

	for s, want := range map[string]struct {
		start, size int64
		ok          bool
	}{
		"bytes 100-199/1000": {100, 1000, true},
		"bytes 0-0/*":        {0, -1, true},
		"bytes */1000":       {0, 1000, true},
		"bytes x-1/1000":     {0, 1000, false},
		"items 0-1/2":        {0, -1, false},
		"bytes 0-1":          {0, -1, false},
		"":                   {0, -1, false},
	} {
		start, size, ok := parseContentRange(s)
		require.Equal(t, want.ok, ok, s)
		if ok {
			require.Equal(t, want.start, start, s)
			require.Equal(t, want.size, size, s)
		}
	}
}
