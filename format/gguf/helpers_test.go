package gguf

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// raw assembles GGUF bytes by hand, so tests can build files the Writer
// would refuse to produce.
type raw []byte

func (r raw) u32(v uint32) raw    { return binary.LittleEndian.AppendUint32(r, v) }
func (r raw) u64(v uint64) raw    { return binary.LittleEndian.AppendUint64(r, v) }
func (r raw) bytes(b ...byte) raw { return append(r, b...) }
func (r raw) str(s string) raw    { return append(r.u64(uint64(len(s))), s...) }

// header starts a file with the magic, a version and the two counts.
func header(version uint32, nTensors, nKV uint64) raw {
	return raw(Magic).u32(version).u64(nTensors).u64(nKV)
}

// tensorInfo appends one tensor info.
func (r raw) tensorInfo(name string, dims []uint64, typ TensorType, off uint64) raw {
	r = r.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		r = r.u64(d)
	}
	return r.u32(uint32(typ)).u64(off)
}

// pad appends zeros up to a multiple of align.
func (r raw) pad(align int) raw {
	for len(r)%align != 0 {
		r = append(r, 0)
	}
	return r
}

// zeros appends n zero bytes.
func (r raw) zeros(n int) raw { return append(r, make([]byte, n)...) }

// smallFile returns a valid file with a few metadata keys and two tensors,
// a Q8_0 one and an F32 one. Its last tensor ends exactly at the end of the
// file, so every proper prefix of it is invalid.
func smallFile(t testing.TB) []byte {
	w := NewWriter()
	w.AddString("general.architecture", "llama")
	w.AddUint32("llama.block_count", 5)
	w.AddStrings("tokenizer.ggml.tokens", []string{"<unk>", "<s>", "</s>"})
	w.AddFloat32s("tokenizer.ggml.scores", []float32{0, -1.5, 2})
	q := make([]byte, Q8_0.TypeSize())
	for i := range q {
		q[i] = byte(i)
	}
	require.NoError(t, w.AddTensor("q", Q8_0, []uint64{32}, q))
	f := make([]byte, 8*2*4)
	for i := range f {
		f[i] = byte(255 - i)
	}
	require.NoError(t, w.AddTensor("blk.0.w", F32, []uint64{8, 2}, f))
	return writeBytes(t, w)
}

// writeBytes returns what w writes.
func writeBytes(t testing.TB, w *Writer) []byte {
	var b bytes.Buffer
	n, err := w.WriteTo(&b)
	require.NoError(t, err)
	require.Equal(t, int64(b.Len()), n)
	return b.Bytes()
}

// sharedDir returns the project's shared test material directory, ../shared
// relative to the module root, or skips the test if it is absent.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("module root (go.mod) not found above the test directory, so ../shared cannot be located")
		}
		dir = parent
	}
	shared := filepath.Join(dir, "..", "shared")
	if st, err := os.Stat(shared); err != nil || !st.IsDir() {
		t.Skipf("the shared models directory %s is absent; skipping tests that need real model files", shared)
	}
	return shared
}
