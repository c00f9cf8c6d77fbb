package golden

import "github.com/kvref/kvref/internal/writefile"

// WriteJUnitFile writes the report as JUnit XML (WriteJUnit) to the file at path, creating
// or truncating it.
func (r *Report) WriteJUnitFile(path string) error { return writefile.Write(path, r.WriteJUnit) }
