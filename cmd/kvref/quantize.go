package main

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/model"
)

func init() {
	register(command{"quantize", "convert a GGUF model's weight matrices to a ggml block type (Q8_0, Q4_K, ...) or F16, BF16", quantizeCmd})
}

func quantizeCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("quantize", stderr,
		"usage: kvref quantize IN.gguf OUT.gguf --wtype T   (flags may come before or after the files)",
		"\nEvery matrix (2-D tensor) is converted; vectors (norms, biases) stay F32. A matrix whose rows",
		"are not a multiple of the type's block (32, or 256 for the K types) falls back to Q8_0, or",
		"stays as it is, as llama-quantize does. The blocks are the bytes llama-quantize --pure writes; a",
		"matrix whose values a type cannot hold (an fp16 scale overflows) or that is not finite is refused.")
	wtype := fs.String("wtype", "q8_0", "weight type: "+model.QuantizedTypeNames()+", f16, bf16 or f32")
	// Flags may also follow the files (kvref quantize IN.gguf OUT.gguf --wtype q4_k), as
	// llama-quantize users write them.
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 2 {
		fs.Usage()
		return errUsage
	}
	target, err := model.ParseQuantizeTarget(*wtype)
	if err != nil {
		return fmt.Errorf("--wtype %w", err)
	}
	in, err := gguf.Open(files[0])
	if err != nil {
		return err
	}
	defer in.Close()
	w, counts, err := model.QuantizeGGUF(in, target)
	if err != nil {
		return err
	}
	if err := w.WriteFile(files[1]); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "kvref quantize: wrote %s:", files[1])
	types := slices.Sorted(maps.Keys(counts))
	for _, t := range types {
		fmt.Fprintf(stderr, " %d %s", counts[t], t)
	}
	fmt.Fprintln(stderr, " tensors")
	return nil
}
