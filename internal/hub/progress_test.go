package hub

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/term"
)

func TestHumanBytes(t *testing.T) {
	t.Parallel()

	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		260 << 20: "260.0 MiB", 3 << 30: "3.0 GiB", 5 << 40: "5.0 TiB", 2048 << 40: "2048.0 TiB",
	} {
		require.Equal(t, want, humanBytes(n), n)
	}
	require.Equal(t, "?", sizeText(-1))
}

func TestProgressBar(t *testing.T) {
	t.Parallel()

	now := time.Now()
	p := &progress{name: "hf://o/r/m.gguf", offset: 1 << 20, done: 3 << 20, total: 4 << 20, start: now.Add(-2 * time.Second)}
	require.Equal(t, "hf://o/r/m.gguf  3.0 MiB / 4.0 MiB   75%  1.0 MiB/s", p.bar(now))
	p.total = -1
	require.Equal(t, "hf://o/r/m.gguf  3.0 MiB / ?  1.0 MiB/s", p.bar(now))
}

func TestProgressLiveRedrawsInPlace(t *testing.T) {
	t.Parallel()

	var buf bytes.Buffer
	p := &progress{w: &buf, live: true, name: "m.gguf", total: -1}
	p.begin(0, 1000)
	p.last = time.Time{} // let the next write redraw at once
	_, err := p.Write(make([]byte, 500))
	require.NoError(t, err)
	p.finish(1000, "sha256 verified")
	out := buf.String()
	lines := strings.Split(out, "\r")
	require.Len(t, lines, 4, "%q", out) // "", the bar at 0%, the bar at 50%, the final line
	require.True(t, strings.HasPrefix(lines[1], "m.gguf  0 B / 1000 B    0%"), "%q", lines[1])
	require.True(t, strings.HasPrefix(lines[2], "m.gguf  500 B / 1000 B   50%"), "%q", lines[2])
	require.True(t, strings.HasPrefix(lines[3], "downloaded m.gguf: 1000 B in "), "%q", lines[3])
	require.Contains(t, lines[3], ", sha256 verified")
	require.True(t, strings.HasSuffix(out, "\n"), "the final line ends the bar: %q", out)
	// A shorter line blanks out what the longer one before it left.
	p.width = 40
	buf.Reset()
	p.show("short")
	require.Equal(t, "\rshort"+strings.Repeat(" ", 35), buf.String())
}

func TestProgressQuietWhenNotATerminal(t *testing.T) {
	t.Parallel()

	var buf bytes.Buffer
	p := newProgress(&buf, "m.gguf")
	require.False(t, p.live)
	p.begin(0, 10)
	p.Write(make([]byte, 10))
	p.abort()
	require.Empty(t, buf.String())
	p.finish(10, "sha256 verified")
	require.Regexp(t, `^downloaded m\.gguf: 10 B in \S+( \(\S+ \S+/s\))?, sha256 verified\n$`, buf.String())

	f, err := os.CreateTemp(t.TempDir(), "progress")
	require.NoError(t, err)
	defer f.Close()
	require.False(t, term.IsTerminal(f), "a regular file is not a terminal")
	require.False(t, newProgress(nil, "x").live)
}
