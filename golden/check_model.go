package golden

import (
	"fmt"

	"github.com/kvref/kvref/model"
)

// CheckModel returns an error unless m, opened from ref, is the model the goldens of dir
// (whose manifest is man) were recorded with, when the manifest names it by SHA-256: any
// other model's outputs would fail every scenario for the wrong reason.
func (man *Manifest) CheckModel(dir, ref string, m *model.Model) error {
	info, err := Identify(ref, m, 0)
	if err != nil {
		return err
	}
	if man.Model.SHA256 != "" && info.SHA256 != man.Model.SHA256 {
		return fmt.Errorf("the goldens in %s were recorded with the model of SHA-256 %s (%s); %s has SHA-256 %s",
			dir, man.Model.SHA256, man.Model.Path, ref, info.SHA256)
	}
	return nil
}
