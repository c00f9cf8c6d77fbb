package benchmark

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/model/loader"
)

// CheckGGUF returns an error unless path names a GGUF file, which llama-bench,
// llama-batched-bench and node-llama-cpp read (and kvref must read the same file).
func CheckGGUF(path string) error {
	if path == "" || loader.KindOf(path) != loader.File {
		return fmt.Errorf("--vs-llama-bench: -m must name a GGUF file that both engines read, got %q", path)
	}
	ok, err := gguf.IsFile(path)
	if err != nil {
		return fmt.Errorf("--vs-llama-bench: %w", err)
	}
	if !ok {
		return fmt.Errorf("--vs-llama-bench: %s is not a GGUF file (llama-bench reads only GGUF; convert it with kvref quantize or llama.cpp's tools)", path)
	}
	return nil
}

// ParseInts parses a comma-separated list of positive integers, such as the batch sizes
// "1,2,4,8".
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", p)
		}
		out = append(out, v)
	}
	return out, nil
}
