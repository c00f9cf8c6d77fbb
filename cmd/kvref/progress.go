package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/kvref/kvref/internal/term"
)

// progress draws a one-line progress bar on a terminal and stays silent otherwise.
type progress struct {
	w          io.Writer
	total, now int
	tty        bool
}

// newProgress returns a progress bar drawn on w when w is a terminal.
func newProgress(w io.Writer) *progress {
	return &progress{w: w, tty: term.IsTerminal(w)}
}

// set draws the bar at now of total.
func (p *progress) set(now, total int) {
	p.now, p.total = now, total
	if !p.tty || p.total == 0 {
		return
	}
	const width = 30
	fill := width * p.now / p.total
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), p.now, p.total)
}

// done ends the bar's line.
func (p *progress) done() {
	if p.tty {
		fmt.Fprintln(p.w)
	}
}
