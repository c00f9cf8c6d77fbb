package golden

import "os"

// WriteJUnitFile writes the report as JUnit XML (WriteJUnit) to the file at path, creating
// or truncating it.
func (r *Report) WriteJUnitFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := r.WriteJUnit(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
