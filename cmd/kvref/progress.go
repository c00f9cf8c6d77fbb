package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// progress draws a one-line progress bar on a terminal and stays silent otherwise.
type progress struct {
	w          io.Writer
	total, now int
	tty        bool
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) add(n int) {
	p.now += n
	if !p.tty || p.total == 0 {
		return
	}
	const width = 30
	fill := width * p.now / p.total
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), p.now, p.total)
}

func (p *progress) done() {
	if p.tty {
		fmt.Fprintln(p.w)
	}
}
