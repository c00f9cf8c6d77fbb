package safetensors

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// shardedDir writes a two-shard checkpoint of sampleTensors with the given
// index JSON (or the correct one when index is "") and returns the directory.
func shardedDir(t *testing.T, index string) string {
	t.Helper()
	dir := t.TempDir()
	all := sampleTensors()
	writeFile(t, dir, "model-00001-of-00002.safetensors", encode(t, all[:3], map[string]string{"format": "pt"}))
	writeFile(t, dir, "model-00002-of-00002.safetensors", encode(t, all[3:], map[string]string{"format": "pt"}))
	if index == "" {
		index = `{"metadata": {"total_size": 117}, "weight_map": {`
		for i, tensor := range all {
			shard := "model-00001-of-00002.safetensors"
			if i >= 3 {
				shard = "model-00002-of-00002.safetensors"
			}
			if i > 0 {
				index += ","
			}
			index += string(appendString(nil, tensor.Name)) + `: "` + shard + `"`
		}
		index += "}}"
	}
	writeFile(t, dir, IndexFile, []byte(index))
	return dir
}

func TestOpenDirSharded(t *testing.T) {
	t.Parallel()

	dir := shardedDir(t, "")
	s, err := OpenDir(dir)
	require.NoError(t, err)
	defer s.Close()
	require.Len(t, s.Files, 2)
	require.Equal(t, filepath.Join(dir, "model-00001-of-00002.safetensors"), s.Files[0].Path)
	require.Equal(t, dir, s.Dir)

	all := sampleTensors()
	var names []string
	for i, want := range all {
		names = append(names, want.Name)
		info, f, ok := s.Tensor(want.Name)
		require.True(t, ok, want.Name)
		require.Same(t, s.Files[min(i/3, 1)], f, "%s is in the right shard", want.Name)
		require.Equal(t, want.Shape, info.Shape)
		data, err := s.TensorData(want.Name)
		require.NoError(t, err)
		require.Equal(t, len(want.Data), len(data))
		require.Equal(t, string(want.Data), string(data))
	}
	require.ElementsMatch(t, names, s.Names())
	require.IsIncreasing(t, s.Names())

	_, _, ok := s.Tensor("nope")
	require.False(t, ok)
	_, err = s.TensorData("nope")
	require.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.Close())
	_, err = s.TensorData(all[0].Name)
	require.ErrorContains(t, err, "file is closed")
}

func TestOpenDirSingle(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	writeFile(t, dir, SingleFile, encode(t, sampleTensors(), nil))
	s, err := OpenDir(dir)
	require.NoError(t, err)
	defer s.Close()
	require.Len(t, s.Files, 1)
	require.Len(t, s.Names(), len(sampleTensors()))

	// model.safetensors wins over an index, as in transformers.
	writeFile(t, dir, IndexFile, []byte(`not even JSON`))
	s2, err := OpenDir(dir)
	require.NoError(t, err)
	s2.Close()
}

func TestOpenDirRejects(t *testing.T) {
	t.Parallel()

	shard1 := `"model-00001-of-00002.safetensors"`
	shard2 := `"model-00002-of-00002.safetensors"`
	all := sampleTensors()
	// mapOf builds a weight map listing every sample tensor in its shard, with edits.
	mapOf := func(edit func(m map[string]string)) string {
		m := map[string]string{}
		for i, tensor := range all {
			m[tensor.Name] = shard1
			if i >= 3 {
				m[tensor.Name] = shard2
			}
		}
		if edit != nil {
			edit(m)
		}
		out := `{"weight_map":{`
		first := true
		for k, v := range m {
			if !first {
				out += ","
			}
			first = false
			out += string(appendString(nil, k)) + ":" + v
		}
		return out + "}}"
	}
	cases := []struct {
		name, index string
		want        []string
	}{
		{"bad JSON", `{"weight_map":`, []string{IndexFile, "not a valid JSON object"}},
		{"no weight map", `{"metadata":{}}`, []string{"has no weight_map"}},
		{"empty weight map", `{"weight_map":{}}`, []string{"weight_map lists no tensors"}},
		{"weight map not an object", `{"weight_map":[]}`, []string{"weight_map: want an object"}},
		{"shard not a string", `{"weight_map":{"a":1}}`, []string{`tensor "a": want a string, got 1`}},
		{"duplicate tensor", `{"weight_map":{"a":` + shard1 + `,"a":` + shard2 + `}}`, []string{`name "a" appears twice`}},
		{"path traversal", mapOf(func(m map[string]string) { m["mask"] = `"../model-00001-of-00002.safetensors"` }),
			[]string{`tensor "mask" is in file "../model-00001-of-00002.safetensors", want a plain file name`}},
		{"absolute path", mapOf(func(m map[string]string) { m["mask"] = `"/etc/passwd"` }), []string{"want a plain file name"}},
		{"missing shard", mapOf(func(m map[string]string) { m["mask"] = `"model-00003-of-00002.safetensors"` }),
			[]string{"model-00003-of-00002.safetensors", "no such file", "a shard named by"}},
		{"tensor not in its shard", mapOf(func(m map[string]string) { m["mask"] = shard1 }),
			[]string{`lists tensor "mask" in model-00001-of-00002.safetensors, which does not hold it`}},
		{"tensor not listed", mapOf(func(m map[string]string) { delete(m, "mask") }),
			[]string{`does not list tensor "mask", which model-00002-of-00002.safetensors holds`}},
		{"listed tensor absent everywhere", mapOf(func(m map[string]string) { m["ghost"] = shard2 }),
			[]string{`lists tensor "ghost" in model-00002-of-00002.safetensors, which does not hold it`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := OpenDir(shardedDir(t, c.index))
			require.Error(t, err)
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}

	t.Run("tensor in two shards", func(t *testing.T) {
		dir := shardedDir(t, "")
		writeFile(t, dir, "model-00002-of-00002.safetensors", encode(t, append(all[3:], all[0]), nil))
		_, err := OpenDir(dir)
		require.ErrorContains(t, err, `lists tensor "model.embed_tokens.weight" in model-00001-of-00002.safetensors, but model-00002-of-00002.safetensors holds it too`)
	})
	t.Run("corrupt shard", func(t *testing.T) {
		dir := shardedDir(t, "")
		writeFile(t, dir, "model-00002-of-00002.safetensors", []byte("junk"))
		_, err := OpenDir(dir)
		require.ErrorContains(t, err, "model-00002-of-00002.safetensors: file is 4 bytes")
	})
	t.Run("empty directory", func(t *testing.T) {
		dir := t.TempDir()
		_, err := OpenDir(dir)
		require.ErrorContains(t, err, "holds neither model.safetensors nor model.safetensors.index.json")
	})
	t.Run("not a directory", func(t *testing.T) {
		p := writeFile(t, t.TempDir(), SingleFile, encode(t, all, nil))
		_, err := OpenDir(p)
		require.ErrorContains(t, err, "is not a directory")
	})
	t.Run("missing directory", func(t *testing.T) {
		_, err := OpenDir(filepath.Join(t.TempDir(), "nope"))
		require.ErrorIs(t, err, os.ErrNotExist)
	})
}
