package synth

import (
	"slices"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/model"
)

// WriteQuantizedFile writes the shape's model as a GGUF file with its matrices converted to
// target (model.QuantizeGGUF), and returns how many tensors of each type it holds.
func (s Shape) WriteQuantizedFile(path string, target gguf.TensorType) (map[gguf.TensorType]int, error) {
	data, err := s.Bytes()
	if err != nil {
		return nil, err
	}
	f, err := gguf.Parse(path, data)
	if err != nil {
		return nil, err
	}
	w, counts, err := model.QuantizeGGUF(f, target)
	if err != nil {
		return nil, err
	}
	return counts, w.WriteFile(path)
}

// VariantNames are the names of Variants, sorted.
func VariantNames() []string {
	names := make([]string, 0, len(Variants))
	for n := range Variants {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
