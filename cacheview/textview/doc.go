// Package textview prints an stepper.Session as text: the model and the cache's arithmetic,
// each command's record (a prefill with its prefix hits, a decode step with the block and
// slot its K/V went to, a copy-on-write or an eviction, a fork, a free), the live
// sequences, the pool as a grid of blocks, and a decode step's attention as a bar chart.
// It is what `kvref step` prints, and Console.Exec runs step's command language (n, pick,
// fork, switch, free, add, ...; Help lists it), so that any front end or a test can drive
// the same commands; the web stepper (package cacheview) draws the same records in a browser.
//
// Every line is labelled with a short word in a column of its own so that a transcript
// reads as a table, and no line ends in spaces (transcripts are kept in Markdown and
// compared by tests). A View writes to an io.Writer and makes no terminal assumptions:
// colours are used only when View.Color is set.
package textview
