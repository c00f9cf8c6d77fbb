package hub

import (
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFetchVerifiesAGivenChecksum: a URL whose server announces no checksum is verified
// against the one the caller gives: a match is stored, a mismatch deleted; a file already in
// the cache is checked against it too, and a malformed checksum is refused.
func TestFetchVerifiesAGivenChecksum(t *testing.T) {
	t.Setenv("HF_ENDPOINT", "https://hub.invalid")
	s := &plainServer{data: pattern(10_000, 21)}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	ref := srv.URL + "/files/model.bin"
	good := sha256Hex(s.data)
	bad := strings.Repeat("0", 64)

	dir := t.TempDir()
	_, _, err := fetch(t, ref, dir, Options{SHA256: bad})
	require.ErrorContains(t, err, "sha256 mismatch: expected "+bad+" (given), got "+good)
	noFiles(t, dir)

	p, prog, err := fetch(t, ref, dir, Options{SHA256: strings.ToUpper(good)})
	require.NoError(t, err)
	require.Contains(t, prog, "sha256 verified against the checksum given")

	// Cached: no request, but the given checksum is still checked.
	_, _, err = fetch(t, ref, dir, Options{SHA256: good})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, append(s.data[:100:100], 'x'), 0o644))
	_, _, err = fetch(t, ref, dir, Options{SHA256: good})
	require.ErrorContains(t, err, "the cached file")
	var stale *StaleCacheError
	require.ErrorAs(t, err, &stale)
	require.Equal(t, strings.ToLower(good), stale.Want)
	require.Equal(t, p, stale.Path)

	_, _, err = fetch(t, ref, t.TempDir(), Options{SHA256: "abc"})
	require.ErrorContains(t, err, "not 64 hex digits")
}
