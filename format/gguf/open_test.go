package gguf

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// mmapPlatforms are the systems where Open must map the file.
var mmapPlatforms = []string{"linux", "darwin", "freebsd", "netbsd", "openbsd", "dragonfly"}

func TestOpenMatchesParse(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "small.gguf")
	data := smallFile(t)
	require.NoError(t, os.WriteFile(path, data, 0o644))

	opened, err := Open(path)
	require.NoError(t, err)
	defer opened.Close()
	if slices.Contains(mmapPlatforms, runtime.GOOS) {
		require.True(t, opened.mapping != nil && opened.mapping.Mapped(), "Open maps the file on %s", runtime.GOOS)
	}
	parsed, err := Parse(path, data)
	require.NoError(t, err)

	assertSameFile(t, parsed, opened)
}

// assertSameFile checks that two Files hold the same metadata, tensors and
// tensor bytes.
func assertSameFile(t *testing.T, want, got *File) {
	t.Helper()
	require.Equal(t, want.Path, got.Path)
	require.Equal(t, want.Version, got.Version)
	require.Equal(t, want.Alignment, got.Alignment)
	require.Equal(t, want.DataOffset, got.DataOffset)
	require.Equal(t, len(want.Metadata), len(got.Metadata))
	for i := range want.Metadata {
		require.Equal(t, want.Metadata[i].Key, got.Metadata[i].Key)
		require.Truef(t, want.Metadata[i].Value.Equal(got.Metadata[i].Value), "metadata key %s differs", want.Metadata[i].Key)
	}
	require.Equal(t, want.Tensors, got.Tensors)
	for i := range want.Tensors {
		a, err := want.TensorData(&want.Tensors[i])
		require.NoError(t, err)
		b, err := got.TensorData(&got.Tensors[i])
		require.NoError(t, err)
		require.Equalf(t, a, b, "tensor %s data differs", want.Tensors[i].Name)
	}
}

func TestOpenClose(t *testing.T) {
	t.Parallel()

	path := filepath.Join(t.TempDir(), "small.gguf")
	require.NoError(t, os.WriteFile(path, smallFile(t), 0o644))
	f, err := Open(path)
	require.NoError(t, err)
	w, ok := f.Tensor("blk.0.w")
	require.True(t, ok)
	_, err = f.TensorData(w)
	require.NoError(t, err)

	require.NoError(t, f.Close())
	require.NoError(t, f.Close(), "Close is safe to call twice")
	_, err = f.TensorData(w)
	require.ErrorContains(t, err, "file is closed")
	s, err := f.String("general.architecture")
	require.NoError(t, err, "metadata outlives Close")
	require.Equal(t, "llama", s)
	tokens, err := f.Strings("tokenizer.ggml.tokens")
	require.NoError(t, err)
	require.Equal(t, []string{"<unk>", "<s>", "</s>"}, tokens)
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.gguf")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	bad := filepath.Join(dir, "bad.gguf")
	require.NoError(t, os.WriteFile(bad, []byte("GGUF\x01\x00\x00\x00"), 0o644))
	cut := filepath.Join(dir, "cut.gguf")
	data := smallFile(t)
	require.NoError(t, os.WriteFile(cut, data[:len(data)-1], 0o644))

	tests := []struct {
		name    string
		path    string
		wantErr string
	}{
		{"missing file", filepath.Join(dir, "nope.gguf"), "nope.gguf: no such file"},
		{"empty file", empty, "empty.gguf: file is 0 bytes, too short for a GGUF header"},
		{"version 1", bad, "bad.gguf: GGUF version 1 is not supported"},
		{"truncated", cut, `cut.gguf: tensor "blk.0.w" needs 64 bytes`},
		{"directory", dir, "gguf: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Open(tt.path)
			require.Nil(t, f)
			require.ErrorContains(t, err, tt.wantErr)
		})
	}
}
