package plan

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/pages"
	"github.com/kvref/kvref/quant"
)

// TestCheckOneSource wants exactly one of a model, a preset and shape flags.
func TestCheckOneSource(t *testing.T) {
	require.NoError(t, CheckOneSource("m.gguf", "", false))
	require.NoError(t, CheckOneSource("", "llama-3.1-8b", false))
	require.NoError(t, CheckOneSource("", "", true))
	err := CheckOneSource("", "", false)
	require.ErrorContains(t, err, "say which model to plan")
	require.ErrorContains(t, err, PresetNames()[0])
	require.EqualError(t, CheckOneSource("m.gguf", "x", true),
		"give only one of -m, --preset and the shape flags, not -m and --preset and shape flags (--layers, --kv-heads, …)")
}

// TestPresetSource carries the preset's shape, repository and note, with no file weights.
func TestPresetSource(t *testing.T) {
	name := PresetNames()[0]
	p, err := LookupPreset(name)
	require.NoError(t, err)
	s, err := PresetSource(name)
	require.NoError(t, err)
	require.Equal(t, Source{Name: p.Name, From: p.Repo, Shape: p.Shape, FileWeights: -1, Note: p.Note}, s)
	_, err = PresetSource("nope")
	require.ErrorAs(t, err, new(*UnknownPresetError))
}

// TestShapeSource names the missing numbers, defaults the width, and validates.
func TestShapeSource(t *testing.T) {
	_, err := ShapeSource(Shape{KVHeads: 8})
	require.EqualError(t, err, "a shape needs --layers, --kv-heads and --head-dim; missing --layers, --head-dim")
	s, err := ShapeSource(Shape{Layers: 32, Heads: 32, KVHeads: 8, HeadDim: 128})
	require.NoError(t, err)
	require.Equal(t, 4096, s.Shape.Dim)
	require.Equal(t, "flags", s.From)
	require.Equal(t, int64(-1), s.FileWeights)
	_, err = ShapeSource(Shape{Layers: 2, Heads: 3, KVHeads: 2, HeadDim: 4})
	require.Error(t, err, "3 query heads do not group over 2 KV heads")
}

// TestChooseContext: the asked context wins, else the trained one, else the default, with
// a note for the default and for going past the trained context.
func TestChooseContext(t *testing.T) {
	c, note := ChooseContext(8192, 0, false)
	require.Equal(t, 8192, c)
	require.Empty(t, note)
	c, note = ChooseContext(0, 0, false)
	require.Equal(t, DefaultContext, c)
	require.Contains(t, note, "is a default")
	c, note = ChooseContext(8192, 4096, true)
	require.Equal(t, 4096, c)
	require.Empty(t, note)
	c, note = ChooseContext(8192, 16384, true)
	require.Equal(t, 16384, c)
	require.Equal(t, "--ctx 16384 is beyond the model's trained context of 8192 tokens", note)
	c, note = ChooseContext(0, 16384, true)
	require.Equal(t, 16384, c)
	require.Empty(t, note)
}

// TestChooseSharedPrefixes: the defaults, a given prefix beside none, or none alone.
func TestChooseSharedPrefixes(t *testing.T) {
	require.Equal(t, []int{0, 1024, 2048, 3072}, ChooseSharedPrefixes(4096, 0, false))
	require.Equal(t, []int{0, 500}, ChooseSharedPrefixes(4096, 500, true))
	require.Equal(t, []int{0}, ChooseSharedPrefixes(4096, 0, true))
}

// TestChooseMemory: the size given, described as given, else MemAvailable, else an
// error that asks for --mem.
func TestChooseMemory(t *testing.T) {
	n, from, err := ChooseMemory(true, 16<<30, "16GiB")
	require.NoError(t, err)
	require.Equal(t, int64(16<<30), n)
	require.Equal(t, "--mem 16GiB = 17179869184 B", from)

	old := availableMemory
	t.Cleanup(func() { availableMemory = old })
	availableMemory = func() (int64, string, error) { return 2000 * 1024, pages.SourceMemAvailable, nil }
	n, from, err = ChooseMemory(false, 0, "")
	require.NoError(t, err)
	require.Equal(t, int64(2000*1024), n)
	require.Equal(t, "this machine's MemAvailable, 2048000 B (--mem plans for another)", from)

	availableMemory = func() (int64, string, error) { return 0, "", errors.New("pages: cannot read the available memory") }
	_, _, err = ChooseMemory(false, 0, "")
	require.ErrorContains(t, err, "say how much memory to plan for with --mem SIZE")
}

// TestExplain puts a NoRoomError in words and leaves other errors as they are.
func TestExplain(t *testing.T) {
	in := Input{Shape: Shape{Layers: 2, KVHeads: 2, HeadDim: 8}, KType: quant.F16, VType: quant.F16, Context: 64, BlockSize: 16,
		Memory: 1000, Weights: 2000, SharedPrefixes: []int{0}}
	r, err := Compute(in)
	require.ErrorAs(t, err, new(*NoRoomError))
	got := Explain(in, r, err, "--weights 2000", "--mem 1000")
	require.EqualError(t, got, "the weights need 1.95 KiB (--weights 2000) but the memory is 1000 B (--mem 1000): nothing is left for the KV cache, "+
		"whose full 64-token sequence needs 8.00 KiB (128 B per token); give more --mem, or smaller --weights/--weights-dtype")
	other := errors.New("other")
	require.Equal(t, other, Explain(in, r, other, "", ""))
	require.NoError(t, Explain(in, r, nil, "", ""))
}

// TestNoFitNote: a note only when not one full sequence fits.
func TestNoFitNote(t *testing.T) {
	in := Input{Shape: Shape{Layers: 2, KVHeads: 2, HeadDim: 8}, KType: quant.F16, VType: quant.F16, Context: 64, BlockSize: 16,
		Memory: 3000, Weights: 2000, SharedPrefixes: []int{0}}
	r, err := Compute(in)
	require.NoError(t, err)
	require.Zero(t, r.MaxSequences)
	require.Equal(t, "not one full 64-token sequence fits: it needs 8.00 KiB and 1000 B is left; try a shorter --ctx or a smaller --cache-dtype", r.NoFitNote(64))
	in.Memory = 1 << 20
	r, err = Compute(in)
	require.NoError(t, err)
	require.Empty(t, r.NoFitNote(64))
}
