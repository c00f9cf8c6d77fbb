package main

import "github.com/kvref/kvref/internal/plan"

// sizeFlag is a flag.Value holding a size parsed by plan.ParseSize.
type sizeFlag struct {
	bytes int64
	text  string // as given; empty when the flag was not set
}

// String returns the size as given on the command line.
func (f *sizeFlag) String() string { return f.text }

// Set parses a size.
func (f *sizeFlag) Set(s string) error {
	n, err := plan.ParseSize(s)
	if err != nil {
		return err
	}
	f.bytes, f.text = n, s
	return nil
}

// set reports whether the flag was given.
func (f *sizeFlag) set() bool { return f.text != "" }
