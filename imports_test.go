package kvref_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestImportGrouping holds every Go file of the module to goimports' grouping with
// -local github.com/kvref/kvref: the standard library first, then other modules, then
// kvref's own packages, each kind in one group of its own, the groups separated by a
// blank line.
func TestImportGrouping(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "node_modules" || name == "testdata" || (strings.HasPrefix(name, ".") && path != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		lastKind, lastLine := -1, 0
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err, path)
			kind := importKind(p)
			line := fset.Position(imp.Pos()).Line
			newGroup := lastKind >= 0 && line > lastLine+1
			switch {
			case kind < lastKind:
				require.Failf(t, "import order", "%s: %q (%s) after a %s import: want the standard library, then other modules, then kvref's packages", path, p, kindNames[kind], kindNames[lastKind])
			case lastKind >= 0 && kind != lastKind && !newGroup:
				require.Failf(t, "import grouping", "%s: %q (%s) in the group of %s imports: each kind wants a group of its own", path, p, kindNames[kind], kindNames[lastKind])
			case kind == lastKind && newGroup:
				require.Failf(t, "import grouping", "%s: %q starts a second group of %s imports", path, p, kindNames[kind])
			}
			lastKind, lastLine = kind, fset.Position(imp.End()).Line
		}
		return nil
	})
	require.NoError(t, err)
}

var kindNames = []string{"standard library", "other module", "kvref"}

// importKind is 0 for the standard library, 1 for another module, 2 for kvref's packages.
func importKind(path string) int {
	switch {
	case path == "github.com/kvref/kvref" || strings.HasPrefix(path, "github.com/kvref/kvref/"):
		return 2
	case strings.Contains(strings.Split(path, "/")[0], "."):
		return 1
	}
	return 0
}
