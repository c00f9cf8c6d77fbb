package golden

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRecordDir: every scenario is recorded in order, done hears of each, and the
// directory read back holds the same goldens under a manifest naming the model, the suite,
// the parameters, the version and the top-k.
func TestRecordDir(t *testing.T) {
	m := tiny(t)
	scs := tinySuite(t)[:2]
	dir := t.TempDir()
	man := &Manifest{Model: tinyInfo(m), Suite: "default", Params: tinyParams}
	var heard []string
	goldens, err := RecordDir(dir, m, man, scs, RecordOptions{TopK: 3, Threads: 1}, func(g *Golden, took time.Duration) {
		require.Positive(t, took)
		heard = append(heard, g.Scenario.Name)
	})
	require.NoError(t, err)
	require.Equal(t, []string{scs[0].Name, scs[1].Name}, heard)

	readMan, read, err := ReadDir(dir)
	require.NoError(t, err)
	require.Equal(t, Version(), readMan.KvrefVersion)
	require.Equal(t, 3, readMan.TopK)
	require.Equal(t, "default", readMan.Suite)
	require.Equal(t, tinyInfo(m), readMan.Model)
	require.Equal(t, tinyParams.BlockSize, readMan.Params.BlockSize)
	require.Len(t, read, 2)
	for i, g := range read {
		require.Equal(t, scs[i].Name, g.Scenario.Name)
		require.Equal(t, goldens[i].Requests[0].Choices[0].OutputIDs, g.Requests[0].Choices[0].OutputIDs)
		require.Len(t, g.Requests[0].Choices[0].Steps[0].Top, 3)
	}
}

// TestRecordDirWritesNothingOnFailure: a scenario that cannot be recorded (written for
// another model) fails the directory, and no manifest is written.
func TestRecordDirWritesNothingOnFailure(t *testing.T) {
	m := tiny(t)
	other := *tinySuite(t)[0]
	other.Model = &ModelRef{SHA256: "0123"}
	dir := filepath.Join(t.TempDir(), "goldens")
	man := &Manifest{Model: tinyInfo(m), Suite: "default", Params: tinyParams}
	_, err := RecordDir(dir, m, man, []*Scenario{tinySuite(t)[0], &other}, RecordOptions{Threads: 1}, nil)
	require.ErrorContains(t, err, "was written for the model with SHA-256 0123")
	_, err = os.Stat(dir)
	require.True(t, errors.Is(err, fs.ErrNotExist), "nothing written: %v", err)
}

// TestWriteJUnitFile: the file holds what WriteJUnit writes, and a path that cannot be
// created is an error.
func TestWriteJUnitFile(t *testing.T) {
	rep := mixedReport(t)
	var want bytes.Buffer
	require.NoError(t, rep.WriteJUnit(&want))
	path := filepath.Join(t.TempDir(), "junit.xml")
	require.NoError(t, rep.WriteJUnitFile(path))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, want.String(), string(got))
	require.Error(t, rep.WriteJUnitFile(filepath.Join(t.TempDir(), "missing", "junit.xml")))
}
