// Package inspect reports what a model is: its hyper-parameters, tokenizer and tensors, and
// the KV cache arithmetic at every cache type beside its weights (kvref inspect).
package inspect

import (
	"fmt"
	"io"
	"strings"

	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/model"
)

// Report is what kvref inspect shows of a model (its --json output): the hyper-parameters,
// the tokenizer, the tensors and the KV cache arithmetic at every cache type.
type Report struct {
	Path         string                `json:"path"`
	Format       string                `json:"format"`
	Config       model.Config          `json:"config"`
	Params       uint64                `json:"parameters"`
	WeightBytes  int64                 `json:"weight_bytes"`
	Tokenizer    Tokenizer             `json:"tokenizer"`
	Tensors      []model.TensorSummary `json:"tensors"`
	Memory       int64                 `json:"memory"`
	MemorySource string                `json:"memory_source"`
	BlockSize    int                   `json:"block_size"`
	Cache        []plan.TypeRow        `json:"cache"`
}

// Tokenizer is a Report's summary of the tokenizer.
type Tokenizer struct {
	VocabSize int  `json:"vocab_size"`
	BOS       int  `json:"bos"`
	EOS       int  `json:"eos"`
	AddBOS    bool `json:"add_bos"`
}

// New builds the report of m, with the cache arithmetic for blocks of blockSize tokens
// beside the weights in memory bytes (described by memorySource).
func New(m *model.Model, memory int64, memorySource string, blockSize int) Report {
	c := m.Config
	r := Report{Path: m.Source, Format: m.Format, Config: c, Params: m.Params(), WeightBytes: m.Weights.Bytes(),
		Tensors: m.Tensors, BlockSize: blockSize, Memory: memory, MemorySource: memorySource,
		Tokenizer: Tokenizer{VocabSize: m.Tokenizer.VocabSize(), BOS: m.Tokenizer.BOS(), EOS: m.Tokenizer.EOS(), AddBOS: m.Tokenizer.AddBOS()}}
	r.Cache = plan.EveryCacheType(plan.Input{Shape: c.PlanShape(), Context: c.Context, BlockSize: blockSize,
		Memory: memory, Weights: r.WeightBytes})
	return r
}

// WriteText writes the report as kvref inspect prints it.
func (r Report) WriteText(w io.Writer) {
	c := r.Config
	fmt.Fprintf(w, "%s (%s)\n\n", r.Path, r.Format)
	fmt.Fprintf(w, "architecture     %s\n", c.Arch)
	fmt.Fprintf(w, "embedding        %d\n", c.Dim)
	fmt.Fprintf(w, "layers           %d\n", c.Layers)
	fmt.Fprintf(w, "heads            %d query, %d key/value (GQA group %d), head_dim %d\n", c.Heads, c.KVHeads, c.Heads/c.KVHeads, c.HeadDim)
	fmt.Fprintf(w, "feed-forward     %d\n", c.Hidden)
	fmt.Fprintf(w, "vocabulary       %d (BOS %d, EOS %d, add BOS %v)\n", r.Tokenizer.VocabSize, r.Tokenizer.BOS, r.Tokenizer.EOS, r.Tokenizer.AddBOS)
	fmt.Fprintf(w, "context          %d\n", c.Context)
	style := "adjacent pairs"
	if c.RopeStyle != 0 {
		style = "halves (NeoX / Hugging Face)"
	}
	fmt.Fprintf(w, "rope             base %g, %d dims, %s", c.RopeBase, c.RopeDims, style)
	if c.RopeScaling.Type != "" {
		fmt.Fprintf(w, ", %s scaling ×%g", c.RopeScaling.Type, c.RopeScaling.Factor)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "rms norm eps     %g\n", c.NormEps)
	if extras := c.Features(); len(extras) > 0 {
		fmt.Fprintf(w, "features         %s\n", strings.Join(extras, ", "))
	}
	fmt.Fprintf(w, "parameters       %d\n", r.Params)
	fmt.Fprintf(w, "weight bytes     %d (%s)\n\n", r.WeightBytes, plan.FormatSize(r.WeightBytes))
	fmt.Fprintf(w, "%d tensors:\n", len(r.Tensors))
	for _, t := range r.Tensors {
		fmt.Fprintf(w, "  %-32s %-5s %v\n", t.Name, t.Type, t.Shape)
	}
	fmt.Fprintf(w, "\nKV cache: bytes per token = 2 · %d layers · %d KV heads · %d head_dim · bytes per element (+ scales)\n", c.Layers, c.KVHeads, c.HeadDim)
	fmt.Fprintf(w, "full-context sequences (%d tokens, blocks of %d) beside the weights in %s (%s):\n", c.Context, r.BlockSize, plan.FormatSize(r.Memory), r.MemorySource)
	fmt.Fprintf(w, "  %-9s %12s %14s %12s\n", "cache", "B/token", "per sequence", "sequences")
	for _, row := range r.Cache {
		if row.Error != "" {
			fmt.Fprintf(w, "  %-9s %s\n", row.CacheType, row.Error)
			continue
		}
		fmt.Fprintf(w, "  %-9s %12d %14s %12d\n", row.CacheType, row.BytesPerToken, plan.FormatSize(row.BytesPerSequence), row.MaxSequences)
	}
}
