package hub

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kvref/kvref/internal/term"
)

// drawEvery is the shortest time between two redraws of the live progress bar.
const drawEvery = 100 * time.Millisecond

// progress reports a download: a bar redrawn in place with '\r' when its writer is a
// terminal, otherwise a single line at the end. It counts the bytes written to it.
type progress struct {
	w     io.Writer
	live  bool
	name  string
	start time.Time // when the transfer began; zero if there was none
	last  time.Time // last redraw
	// offset is where the transfer started (the resumed bytes), done the bytes so far and
	// total the file's size (-1: unknown).
	offset, done, total int64
	width               int // runes in the line on screen, to blank out what a shorter one leaves
}

func newProgress(w io.Writer, name string) *progress {
	if w == nil {
		w = io.Discard
	}
	return &progress{w: w, live: term.IsTerminal(w), name: name, total: -1}
}

// begin starts a transfer that resumes at offset of a file of total bytes (-1: unknown).
func (p *progress) begin(offset, total int64) {
	p.offset, p.done, p.total = offset, offset, total
	p.start = time.Now()
	if p.live {
		p.last = p.start
		p.show(p.bar(p.start))
	}
}

// Write counts the bytes of b, redrawing the live bar at most every drawEvery.
func (p *progress) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	if p.live {
		if now := time.Now(); now.Sub(p.last) >= drawEvery {
			p.last = now
			p.show(p.bar(now))
		}
	}
	return len(b), nil
}

// bar is the live line: name, bytes, total, percentage and rate.
func (p *progress) bar(now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s / %s", p.name, humanBytes(p.done), sizeText(p.total))
	if p.total > 0 {
		fmt.Fprintf(&b, "  %3d%%", p.done*100/p.total)
	}
	if r := rate(p.done-p.offset, now.Sub(p.start)); r != "" {
		b.WriteString("  " + r)
	}
	return b.String()
}

// show draws s over the current line.
func (p *progress) show(s string) {
	n := utf8.RuneCountInString(s)
	fmt.Fprintf(p.w, "\r%s%s", s, strings.Repeat(" ", max(p.width-n, 0)))
	p.width = n
}

// abort ends the live line after a failed transfer, so that the error starts on its own line.
func (p *progress) abort() {
	if p.live && p.width > 0 {
		fmt.Fprintln(p.w)
		p.width = 0
	}
}

// finish reports the completed download of size bytes and what verified it.
func (p *progress) finish(size int64, checked string) {
	var msg string
	if p.start.IsZero() {
		msg = fmt.Sprintf("downloaded %s: %s (completed by an earlier run), %s", p.name, humanBytes(size), checked)
	} else {
		elapsed := time.Since(p.start)
		msg = fmt.Sprintf("downloaded %s: %s in %v", p.name, humanBytes(size), elapsed.Round(time.Millisecond))
		if r := rate(p.done-p.offset, elapsed); r != "" {
			msg += " (" + r + ")"
		}
		if p.offset > 0 {
			msg += ", resumed at " + humanBytes(p.offset)
		}
		msg += ", " + checked
	}
	if p.live {
		p.show(msg)
		fmt.Fprintln(p.w)
		p.width = 0
		return
	}
	fmt.Fprintln(p.w, msg)
}

// rate formats n bytes over d as a speed, "" when d is too short to measure.
func rate(n int64, d time.Duration) string {
	if d < time.Millisecond {
		return ""
	}
	return humanBytes(int64(float64(n)/d.Seconds())) + "/s"
}

// humanBytes formats a byte count with binary units: 512 B, 1.5 KiB, 260.0 MiB.
func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	v, unit := float64(n)/1024, "KiB"
	for _, u := range []string{"MiB", "GiB", "TiB"} {
		if v < 1024 {
			break
		}
		v, unit = v/1024, u
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// sizeText is humanBytes, or "?" for an unknown size.
func sizeText(n int64) string {
	if n < 0 {
		return "?"
	}
	return humanBytes(n)
}
