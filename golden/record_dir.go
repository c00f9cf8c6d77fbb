package golden

import (
	"time"

	"github.com/kvref/kvref/model"
)

// RecordDir records each scenario on m with Record (man.Model is the model's identity),
// calling done, when not nil, after each one with its golden and how long it took, then
// writes the goldens into dir with man as their manifest (WriteDir), its version and top-k
// taken from opt. It returns the goldens; a scenario that fails to record fails the whole
// directory before anything is written.
func RecordDir(dir string, m *model.Model, man *Manifest, scenarios []*Scenario, opt RecordOptions, done func(*Golden, time.Duration)) ([]*Golden, error) {
	if opt.Version == "" {
		opt.Version = Version()
	}
	goldens := make([]*Golden, 0, len(scenarios))
	for _, sc := range scenarios {
		start := time.Now()
		g, err := Record(m, man.Model, sc, opt)
		if err != nil {
			return nil, err
		}
		if done != nil {
			done(g, time.Since(start))
		}
		goldens = append(goldens, g)
	}
	man.KvrefVersion, man.TopK = opt.Version, opt.TopK
	return goldens, WriteDir(dir, man, goldens)
}
