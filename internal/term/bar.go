package term

import (
	"fmt"
	"io"
	"strings"
)

// Bar is a one-line progress bar, redrawn in place with '\r' when its writer is a terminal
// and silent otherwise (a log or a pipe gets no control characters).
type Bar struct {
	w          io.Writer
	total, now int
	tty        bool
}

// NewBar returns a progress bar drawn on w when w is a terminal.
func NewBar(w io.Writer) *Bar {
	return &Bar{w: w, tty: IsTerminal(w)}
}

// barWidth is the number of cells between the bar's brackets.
const barWidth = 30

// Set draws the bar at now of total (nothing when total is 0).
func (b *Bar) Set(now, total int) {
	b.now, b.total = now, total
	if !b.tty || b.total == 0 {
		return
	}
	fill := barWidth * b.now / b.total
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d", strings.Repeat("=", fill), strings.Repeat(" ", barWidth-fill), b.now, b.total)
}

// Done ends the bar's line.
func (b *Bar) Done() {
	if b.tty {
		fmt.Fprintln(b.w)
	}
}
