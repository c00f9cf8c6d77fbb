package main

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
)

// TestMain removes the directories the tests of this package share.
func TestMain(m *testing.M) {
	code := m.Run()
	sharedDirs.Range(func(dir, _ any) bool {
		os.RemoveAll(dir.(string))
		return true
	})
	os.Exit(code)
}

// sharedDirs holds directories shared by several tests, removed by TestMain.
var sharedDirs sync.Map

// storiesGoldens is the default suite recorded on stories260K, once per test binary.
var storiesGoldens struct {
	once     sync.Once
	dir, out string
	err      error
}

// stories260KGoldens returns ../shared/models/stories260K.gguf and a directory holding the
// default suite recorded on it with the default block size and pool (about 30 s on two
// cores), recorded once and shared by the tests that verify engines against it; the
// recording's stdout is returned too.
func stories260KGoldens(t *testing.T) (model, dir, out string) {
	t.Helper()
	model = testutil.Shared(t, "models/stories260K.gguf")
	g := &storiesGoldens
	g.once.Do(func() {
		if g.dir, g.err = os.MkdirTemp("", "kvref-stories260K-goldens-"); g.err != nil {
			return
		}
		sharedDirs.Store(g.dir, true)
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"golden", "--model", model, "--suite", "default", "--out", g.dir, "-t", "2"}, &stdout, &stderr); code != 0 {
			g.err = fmt.Errorf("kvref golden exited %d: %s", code, stderr.String())
		}
		g.out = stdout.String()
	})
	require.False(t, g.err != nil, g.err)
	return model, g.dir, g.out
}
