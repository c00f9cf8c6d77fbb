// Package builtin holds kvref's default model, embedded in the binary: stories260K, a real
// 260K-parameter Llama-2-architecture model trained by Andrej Karpathy on TinyStories (MIT),
// converted to GGUF by llama.cpp (MIT). NOTICE.md beside this file gives its provenance and
// licence. It is small enough (1.2 MB) to ship in every build, so that the first command a
// newcomer types prints a story, not noise, with no download.
package builtin

import (
	_ "embed"

	"github.com/kvref/kvref/format/gguf"
	"github.com/kvref/kvref/model"
)

// Name is the embedded model's name, as kvref prints it and as -m accepts it
// ("builtin:stories260K").
const Name = "stories260K"

// Source is the embedded model's Model.Source.
const Source = "builtin:" + Name

// SHA256 is the embedded file's checksum, the same file as ../shared/models/stories260K.gguf.
const SHA256 = "270cba1bd5109f42d03350f60406024560464db173c0e387d91f0426d3bd256d"

//go:embed stories260K.gguf
var stories260K []byte

// GGUF returns the embedded model file's bytes (do not modify them).
func GGUF() []byte { return stories260K }

// Model loads the embedded model. Its weights alias the embedded bytes: nothing is copied.
func Model() (*model.Model, error) {
	f, err := gguf.Parse(Source, stories260K)
	if err != nil {
		return nil, err
	}
	m, err := model.FromGGUF(f, Source)
	if err != nil {
		return nil, err
	}
	m.Digest = SHA256 // the same bytes as the file: the same model
	return m, nil
}
