package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/model"
)

func init() {
	register(command{"inspect", "show a model's hyper-parameters, tensors and KV-cache arithmetic", inspectCmd})
}

// inspectReport is the --json output of `kvref inspect`.
type inspectReport struct {
	Path         string                `json:"path"`
	Format       string                `json:"format"`
	Config       model.Config          `json:"config"`
	Params       uint64                `json:"parameters"`
	WeightBytes  int64                 `json:"weight_bytes"`
	Tokenizer    inspectTokenizer      `json:"tokenizer"`
	Tensors      []model.TensorSummary `json:"tensors"`
	Memory       int64                 `json:"memory"`
	MemorySource string                `json:"memory_source"`
	BlockSize    int                   `json:"block_size"`
	Cache        []plan.TypeRow        `json:"cache"`
}

type inspectTokenizer struct {
	VocabSize int  `json:"vocab_size"`
	BOS       int  `json:"bos"`
	EOS       int  `json:"eos"`
	AddBOS    bool `json:"add_bos"`
}

func inspectCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("inspect", stderr, "usage: kvref inspect [--mem SIZE] [--json] MODEL")
	var mem sizeFlag
	fs.Var(&mem, "mem", "memory for weights and cache (default: this machine's available memory; "+plan.SizeHelp+")")
	blockSize := fs.Int("block-size", kvcache.DefaultBlockSize, "cache block size for the arithmetic")
	asJSON := fs.Bool("json", false, "print one JSON object")
	tokPath := fs.String("tokenizer", "", "tokenizer.bin of a llama2.c checkpoint (default: tokenizer.bin beside it)")
	if err := parseOneArg(fs, args); err != nil {
		return err
	}
	m, err := loadModel(fs.Arg(0), *tokPath, stderr)
	if err != nil {
		return err
	}
	defer m.Close()
	c := m.Config
	rep := inspectReport{Path: m.Source, Format: m.Format, Config: c, Params: m.Params(), WeightBytes: m.Weights.Bytes(),
		Tensors: m.Tensors, BlockSize: *blockSize,
		Tokenizer: inspectTokenizer{VocabSize: m.Tokenizer.VocabSize(), BOS: m.Tokenizer.BOS(), EOS: m.Tokenizer.EOS(), AddBOS: m.Tokenizer.AddBOS()}}
	if mem.set() {
		rep.Memory, rep.MemorySource = mem.bytes, "--mem "+mem.text
	} else if rep.Memory, err = plan.AvailableMemory(); err == nil {
		rep.MemorySource = "this machine's available memory"
	} else {
		return fmt.Errorf("%v; give --mem", err)
	}
	rep.Cache = plan.EveryCacheType(plan.Input{Shape: c.PlanShape(), Context: c.Context, BlockSize: *blockSize,
		Memory: rep.Memory, Weights: rep.WeightBytes})
	if *asJSON {
		return printJSON(stdout, rep)
	}
	w := stdout
	fmt.Fprintf(w, "%s (%s)\n\n", rep.Path, rep.Format)
	fmt.Fprintf(w, "architecture     %s\n", c.Arch)
	fmt.Fprintf(w, "embedding        %d\n", c.Dim)
	fmt.Fprintf(w, "layers           %d\n", c.Layers)
	fmt.Fprintf(w, "heads            %d query, %d key/value (GQA group %d), head_dim %d\n", c.Heads, c.KVHeads, c.Heads/c.KVHeads, c.HeadDim)
	fmt.Fprintf(w, "feed-forward     %d\n", c.Hidden)
	fmt.Fprintf(w, "vocabulary       %d (BOS %d, EOS %d, add BOS %v)\n", rep.Tokenizer.VocabSize, rep.Tokenizer.BOS, rep.Tokenizer.EOS, rep.Tokenizer.AddBOS)
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
	fmt.Fprintf(w, "parameters       %d\n", rep.Params)
	fmt.Fprintf(w, "weight bytes     %d (%s)\n\n", rep.WeightBytes, plan.FormatSize(rep.WeightBytes))
	fmt.Fprintf(w, "%d tensors:\n", len(rep.Tensors))
	for _, t := range rep.Tensors {
		fmt.Fprintf(w, "  %-32s %-5s %v\n", t.Name, t.Type, t.Shape)
	}
	fmt.Fprintf(w, "\nKV cache: bytes per token = 2 · %d layers · %d KV heads · %d head_dim · bytes per element (+ scales)\n", c.Layers, c.KVHeads, c.HeadDim)
	fmt.Fprintf(w, "full-context sequences (%d tokens, blocks of %d) beside the weights in %s (%s):\n", c.Context, rep.BlockSize, plan.FormatSize(rep.Memory), rep.MemorySource)
	fmt.Fprintf(w, "  %-9s %12s %14s %12s\n", "cache", "B/token", "per sequence", "sequences")
	for _, r := range rep.Cache {
		if r.Error != "" {
			fmt.Fprintf(w, "  %-9s %s\n", r.CacheType, r.Error)
			continue
		}
		fmt.Fprintf(w, "  %-9s %12d %14s %12d\n", r.CacheType, r.BytesPerToken, plan.FormatSize(r.BytesPerSequence), r.MaxSequences)
	}
	return nil
}
