package golden

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteList writes the scenario classes and every suite's scenarios for the parameters (a
// suite's classes with their cache types, and what it skips), as kvref golden --list
// prints them. hint, when not nil, may add a line in brackets after a suite's skipped
// scenarios: the caller's way of saying how to set the parameters their reasons name.
func WriteList(w io.Writer, p Params, hint func(skipped []Skipped) string) error {
	window := ""
	if p.Window > 0 {
		window = fmt.Sprintf(", sliding window %d", p.Window)
	}
	fmt.Fprintf(w, "Scenario classes (block size %d, %d blocks = %d tokens, context %d%s):\n\n", p.BlockSize, p.Blocks, p.BlockSize*p.Blocks, p.Context, window)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range Classes() {
		suite := ""
		switch {
		case c.Sliding:
			suite = " [sliding]"
		case c.Hybrid:
			suite = " [hybrid]"
		}
		fmt.Fprintf(tw, "  %s%s\t%s\n", c.Name, suite, c.Summary)
	}
	tw.Flush()
	for _, name := range Suites {
		scs, skipped, err := Suite(name, p)
		if errors.Is(err, ErrNoWindow) {
			fmt.Fprintf(w, "\nSuite %s: only for models with sliding-window attention (kvref golden --list --model MODEL lists it for one)\n", name)
			continue
		}
		if errors.Is(err, ErrNoGroups) {
			fmt.Fprintf(w, "\nSuite %s: only for models with cache groups, sliding layers beside full ones as in Gemma 2 and 3 (kvref golden --list --model MODEL lists it for one)\n", name)
			continue
		}
		var short *WindowTooShortError
		if errors.As(err, &short) && name == "hybrid" {
			fmt.Fprintf(w, "\nSuite %s: %v\n", name, err)
			continue
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\nSuite %s: %d scenarios\n", name, len(scs))
		byClass := map[string][]string{}
		var order []string
		for _, s := range scs {
			if byClass[s.Class] == nil {
				order = append(order, s.Class)
			}
			byClass[s.Class] = append(byClass[s.Class], s.Cache.TypeK)
		}
		for _, c := range order {
			if ts := byClass[c]; len(ts) == 1 {
				fmt.Fprintf(w, "  %s.%s\n", c, ts[0])
			} else {
				fmt.Fprintf(w, "  %s.{%s}\n", c, strings.Join(ts, ","))
			}
		}
		for _, s := range skipped {
			fmt.Fprintf(w, "  (skipped %s: %s)\n", s.Name, s.Reason)
		}
		if hint != nil {
			if h := hint(skipped); h != "" {
				fmt.Fprintf(w, "  (%s)\n", h)
			}
		}
	}
	return nil
}
