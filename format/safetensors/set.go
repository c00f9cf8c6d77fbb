package safetensors

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// The file names of a Hugging Face checkpoint directory.
const (
	// SingleFile holds a whole checkpoint.
	SingleFile = "model.safetensors"
	// IndexFile maps every tensor of a sharded checkpoint to its shard:
	// {"metadata": {...}, "weight_map": {"tensor name": "model-00001-of-00002.safetensors", ...}}.
	IndexFile = "model.safetensors.index.json"
)

// Set is the safetensors files of one checkpoint: a single model.safetensors
// or the shards a model.safetensors.index.json lists. Each file is opened once.
type Set struct {
	Dir   string  // the directory given to OpenDir
	Files []*File // the files, sorted by path

	shard map[string]*File // tensor name -> the file that holds it
	names []string         // every tensor name, sorted
}

// OpenDir opens the safetensors checkpoint in dir, as Hugging Face's
// transformers finds it: model.safetensors if present, else the shards listed
// by model.safetensors.index.json. For a sharded checkpoint it checks that
// every shard the index names is a plain file name in dir that opens and
// parses, that every tensor the index lists is in the shard it names, and that
// every tensor of every shard is listed there, so that each name has exactly
// one home. Call Close when done.
func OpenDir(dir string) (*Set, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("safetensors: %s is not a directory; give the directory holding %s or %s", dir, SingleFile, IndexFile)
	}
	single := filepath.Join(dir, SingleFile)
	if _, err := os.Stat(single); err == nil {
		f, err := Open(single)
		if err != nil {
			return nil, err
		}
		return newSet(dir, []*File{f}), nil
	}
	index := filepath.Join(dir, IndexFile)
	if _, err := os.Stat(index); err != nil {
		return nil, fmt.Errorf("safetensors: %s holds neither %s nor %s; is it a Hugging Face checkpoint directory?", dir, SingleFile, IndexFile)
	}
	weightMap, err := readIndex(index)
	if err != nil {
		return nil, err
	}
	return openShards(dir, index, weightMap)
}

// newSet indexes the tensors of files, which hold distinct names.
func newSet(dir string, files []*File) *Set {
	s := &Set{Dir: dir, Files: files, shard: map[string]*File{}}
	for _, f := range files {
		for _, t := range f.Tensors {
			s.shard[t.Name] = f
			s.names = append(s.names, t.Name)
		}
	}
	slices.Sort(s.names)
	return s
}

// readIndex reads the weight map of a model.safetensors.index.json.
func readIndex(path string) (map[string]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	if st.Size() > MaxHeaderSize {
		return nil, fileErrorf(path, "index is %d bytes, more than the limit of %d", st.Size(), MaxHeaderSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("safetensors: %w", err)
	}
	if !utf8.Valid(data) {
		return nil, fileErrorf(path, "index is not valid UTF-8")
	}
	top, err := members(data)
	if err != nil {
		return nil, fileErrorf(path, "index is not a valid JSON object: %v", err)
	}
	var weights []member
	found := false
	for _, m := range top {
		if m.key != "weight_map" {
			continue
		}
		if weights, err = members(m.value); err != nil {
			return nil, fileErrorf(path, "weight_map: want an object of tensor name to file name: %v", err)
		}
		found = true
	}
	if !found {
		return nil, fileErrorf(path, "index has no weight_map")
	}
	if len(weights) == 0 {
		return nil, fileErrorf(path, "weight_map lists no tensors")
	}
	out := make(map[string]string, len(weights))
	for _, w := range weights {
		var file string
		if err := decodeString(w.value, &file); err != nil {
			return nil, fileErrorf(path, "weight_map: tensor %s: %v", quote(w.key), err)
		}
		if file == "" || file == "." || file == ".." || strings.ContainsAny(file, `/\`) || strings.ContainsRune(file, 0) {
			return nil, fileErrorf(path, "weight_map: tensor %s is in file %s, want a plain file name in the index's directory",
				quote(w.key), quote(file))
		}
		out[w.key] = file
	}
	return out, nil
}

// openShards opens every shard the weight map names and checks that the map
// and the shards agree.
func openShards(dir, index string, weightMap map[string]string) (_ *Set, err error) {
	var shardNames []string
	for _, file := range weightMap {
		if !slices.Contains(shardNames, file) {
			shardNames = append(shardNames, file)
		}
	}
	slices.Sort(shardNames)
	files := make([]*File, 0, len(shardNames))
	defer func() {
		if err != nil {
			for _, f := range files {
				f.Close()
			}
		}
	}()
	byName := map[string]*File{}
	for _, name := range shardNames {
		f, err := Open(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("%w (a shard named by %s)", err, index)
		}
		files = append(files, f)
		byName[name] = f
	}

	tensors := make([]string, 0, len(weightMap))
	for t := range weightMap {
		tensors = append(tensors, t)
	}
	slices.Sort(tensors)
	for _, t := range tensors {
		if _, ok := byName[weightMap[t]].Tensor(t); !ok {
			return nil, fileErrorf(index, "lists tensor %s in %s, which does not hold it", quote(t), weightMap[t])
		}
	}
	for _, name := range shardNames {
		for _, t := range byName[name].Tensors {
			switch listed, ok := weightMap[t.Name]; {
			case !ok:
				return nil, fileErrorf(index, "does not list tensor %s, which %s holds", quote(t.Name), name)
			case listed != name:
				return nil, fileErrorf(index, "lists tensor %s in %s, but %s holds it too", quote(t.Name), listed, name)
			}
		}
	}
	return newSet(dir, files), nil
}

// Names returns the name of every tensor in the set, sorted.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Tensor returns the info of the named tensor and the file that holds it.
func (s *Set) Tensor(name string) (*TensorInfo, *File, bool) {
	f, ok := s.shard[name]
	if !ok {
		return nil, nil, false
	}
	t, ok := f.Tensor(name)
	return t, f, ok
}

// TensorData returns the bytes of the named tensor, a slice of its file's
// mapping, valid until Close.
func (s *Set) TensorData(name string) ([]byte, error) {
	t, f, ok := s.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("safetensors: %s: no tensor %s in the checkpoint: %w", s.Dir, quote(name), ErrNotFound)
	}
	return f.tensorData(t)
}

// Close closes every file of the set.
func (s *Set) Close() error {
	var errs []error
	for _, f := range s.Files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
