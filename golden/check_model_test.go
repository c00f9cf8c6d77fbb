package golden

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/model/loader"
)

// TestCheckModel: the model the goldens were recorded with passes, another one fails with
// an error naming the directory, the model and both SHA-256 sums, and a manifest that names
// no SHA-256 takes any model.
func TestCheckModel(t *testing.T) {
	m := tiny(t)
	ref := loader.SynthPrefix + "tiny"
	info, err := Identify(ref, m, 0)
	require.NoError(t, err)
	require.NotEmpty(t, info.SHA256)

	same := &Manifest{Model: info}
	require.NoError(t, same.CheckModel("goldens", ref, m))

	other := &Manifest{Model: ModelInfo{Path: "other.gguf", SHA256: "00ff"}}
	err = other.CheckModel("goldens", ref, m)
	require.EqualError(t, err, "the goldens in goldens were recorded with the model of SHA-256 00ff (other.gguf); "+ref+" has SHA-256 "+info.SHA256)

	require.NoError(t, (&Manifest{Model: ModelInfo{Path: "any.gguf"}}).CheckModel("goldens", ref, m))
}
