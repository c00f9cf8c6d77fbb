package plan

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kvref/kvref/internal/pages"
)

// Source is the model a plan is for and where its shape came from.
type Source struct {
	Name        string // preset name, file path or "shape flags"
	From        string // the preset's repository, the model's format ("gguf model", ...) or "flags"
	Shape       Shape
	FileWeights int64  // a model file's real tensor bytes; -1 without a file
	Note        string // what the preset's shape leaves out; "" for none
}

// CheckOneSource returns an error unless exactly one source of a shape is given: a model
// (model, the reference given with -m), a preset, or shape flags (shapeGiven).
func CheckOneSource(model, preset string, shapeGiven bool) error {
	var given []string
	if model != "" {
		given = append(given, "-m")
	}
	if preset != "" {
		given = append(given, "--preset")
	}
	if shapeGiven {
		given = append(given, "shape flags (--layers, --kv-heads, …)")
	}
	switch {
	case len(given) == 0:
		return fmt.Errorf("say which model to plan: -m MODEL.gguf, --preset NAME (one of %s), or --layers L --kv-heads H --head-dim D",
			strings.Join(PresetNames(), ", "))
	case len(given) > 1:
		return fmt.Errorf("give only one of -m, --preset and the shape flags, not %s", strings.Join(given, " and "))
	}
	return nil
}

// PresetSource is the source of the named preset (LookupPreset's errors).
func PresetSource(name string) (Source, error) {
	p, err := LookupPreset(name)
	if err != nil {
		return Source{}, err
	}
	return Source{Name: p.Name, From: p.Repo, Shape: p.Shape, FileWeights: -1, Note: p.Note}, nil
}

// ShapeSource is the source of a shape given by its numbers: layers, KV heads and head
// width are required; the embedding width defaults to heads · head width (DefaultDim).
func ShapeSource(s Shape) (Source, error) {
	var missing []string
	for _, n := range []struct {
		name string
		v    int
	}{{"--layers", s.Layers}, {"--kv-heads", s.KVHeads}, {"--head-dim", s.HeadDim}} {
		if n.v == 0 {
			missing = append(missing, n.name)
		}
	}
	if len(missing) > 0 {
		return Source{}, fmt.Errorf("a shape needs --layers, --kv-heads and --head-dim; missing %s", strings.Join(missing, ", "))
	}
	s = s.DefaultDim()
	if err := s.Validate(); err != nil {
		return Source{}, err
	}
	return Source{Name: "shape flags", From: "flags", Shape: s, FileWeights: -1}, nil
}

// ChooseContext is the context to plan: asked when given (given), else the model's
// trained context, else DefaultContext. The note says when the choice needs a word: a
// default taken, or a context beyond the trained one; "" otherwise.
func ChooseContext(trained, asked int, given bool) (int, string) {
	switch {
	case !given && trained == 0:
		return DefaultContext, fmt.Sprintf("context %d is a default: set --ctx to plan another length", DefaultContext)
	case !given:
		return trained, ""
	case trained > 0 && asked > trained:
		return asked, fmt.Sprintf("--ctx %d is beyond the model's trained context of %d tokens", asked, trained)
	}
	return asked, ""
}

// ChooseSharedPrefixes are the shared prefix lengths to plan: the defaults of
// DefaultSharedPrefixes when none is given, else none and the one given (0: none only).
func ChooseSharedPrefixes(context, asked int, given bool) []int {
	switch {
	case !given:
		return DefaultSharedPrefixes(context)
	case asked != 0:
		return []int{0, asked}
	}
	return []int{0}
}

// ChooseMemory is the memory to plan for and how to describe it: the size given (given,
// bytes, as written text), else this machine's available memory (pages.AvailableMemory:
// MemAvailable, or a memory cgroup's room).
func ChooseMemory(given bool, bytes int64, text string) (int64, string, error) {
	if given {
		return bytes, fmt.Sprintf("--mem %s = %d B", text, bytes), nil
	}
	n, source, err := availableMemory()
	if err != nil {
		return 0, "", fmt.Errorf("%v; say how much memory to plan for with --mem SIZE (e.g. --mem 16GiB)", err)
	}
	return n, fmt.Sprintf("this machine's %s, %d B (--mem plans for another)", source, n), nil
}

// availableMemory is how ChooseMemory learns this machine's memory; a variable so tests
// can set it.
var availableMemory = pages.AvailableMemory

// Explain returns the error of Compute for in, err, in words: for a NoRoomError, the
// weights' and the memory's sizes and origins (weightsFrom, memoryFrom) and what a full
// sequence needs; other errors as they are.
func Explain(in Input, r Report, err error, weightsFrom, memoryFrom string) error {
	if errors.As(err, new(*NoRoomError)) {
		return fmt.Errorf("the weights need %s (%s) but the memory is %s (%s): nothing is left for the KV cache, "+
			"whose full %d-token sequence needs %s (%s per token); give more --mem, or smaller --weights/--weights-dtype",
			FormatSize(in.Weights), weightsFrom, FormatSize(in.Memory), memoryFrom, in.Context,
			FormatSize(r.BlockBytesPerSequence), FormatSize(r.BytesPerToken))
	}
	return err
}

// NoFitNote says, when not one full sequence of context tokens fits in what the weights
// leave (MaxSequences 0), what it needs and what is left; "" when one fits.
func (r Report) NoFitNote(context int) string {
	if r.MaxSequences != 0 {
		return ""
	}
	return fmt.Sprintf("not one full %d-token sequence fits: it needs %s and %s is left; try a shorter --ctx or a smaller --cache-dtype",
		context, FormatSize(r.BlockBytesPerSequence), FormatSize(r.Left))
}
