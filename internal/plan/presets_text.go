package plan

import (
	"fmt"
	"io"
	"strings"

	"github.com/kvref/kvref/internal/texttable"
	"github.com/kvref/kvref/quant"
)

// WritePresets writes the preset table (shape, context, f16 bytes per token, parameters,
// repository), where the shapes come from (each list of source fields once) and the
// presets' notes, as `kvref plan --list` prints them.
func WritePresets(w io.Writer) error {
	rows := [][]string{{"preset", "layers", "heads", "KV heads", "head dim", "context", "f16 per token", "parameters", "published as"}}
	for _, p := range presets {
		s := p.Shape
		bpt, err := BytesPerToken(s.Layers, s.KVHeads, s.HeadDim, quant.F16, quant.F16)
		if err != nil {
			return err
		}
		params, _ := s.Params()
		rows = append(rows, []string{p.Name, fmt.Sprint(s.Layers), fmt.Sprint(s.Heads), fmt.Sprint(s.KVHeads),
			fmt.Sprint(s.HeadDim), fmt.Sprint(s.Context), FormatSize(bpt), FormatCount(params), p.Repo})
	}
	texttable.Write(w, "", "lrrrrrrrl", rows)

	var sources []string
	names := map[string][]string{}
	for _, p := range presets {
		if names[p.Source] == nil {
			sources = append(sources, p.Source)
		}
		names[p.Source] = append(names[p.Source], p.Name)
	}
	fmt.Fprintln(w, "\nwhere the shapes come from:")
	for _, src := range sources {
		fmt.Fprintf(w, "  %s\n    %s\n", strings.Join(names[src], ", "), src)
	}
	fmt.Fprintln(w, "\nnotes:")
	for _, p := range presets {
		if p.Note != "" {
			fmt.Fprintf(w, "  %s: %s\n", p.Name, p.Note)
		}
	}
	return nil
}
