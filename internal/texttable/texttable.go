// Package texttable writes rows of text as a table with aligned columns, the layout every
// kvref report for people uses (kvref plan's tables, kvref step's token and block lists).
package texttable

import (
	"fmt"
	"io"
	"strings"
)

// Write writes rows with columns aligned: align has one letter per column, l (left) or r
// (right). Every line starts with indent; two spaces separate columns; no line ends in
// spaces (a left-aligned last column is not padded). Widths count runes, so "·" and "█"
// take one column.
func Write(w io.Writer, indent, align string, rows [][]string) {
	widths := make([]int, len(align))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i > 0 {
				b.WriteString("  ")
			}
			if align[i] == 'r' {
				b.WriteString(pad + c)
			} else if i < len(row)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}
