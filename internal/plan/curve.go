package plan

import "github.com/kvref/kvref/quant"

// Curve is sequences-that-fit against context for every cache type, with one plan's memory,
// weights, shape and block size.
type Curve struct {
	Contexts []int         `json:"contexts"`
	Types    []CurveSeries `json:"types"`
}

// CurveSeries is one cache type's line of a Curve.
type CurveSeries struct {
	CacheType    string  `json:"cache_type"`
	MaxSequences []int64 `json:"max_sequences"` // one per context
	Error        string  `json:"error,omitempty"`
}

// ComputeCurve plans in again for contexts from 256 tokens, doubling, to twice the planned
// context (at least 8192, at most 2^21), once per cache type. A type that cannot store the
// shape has an Error and no points; where the weights leave no room the point is 0.
func ComputeCurve(in Input) Curve {
	var c Curve
	top := min(max(2*in.Context, 8192), 1<<21)
	for n := 256; n <= top; n *= 2 {
		c.Contexts = append(c.Contexts, n)
	}
	for _, t := range quant.CacheTypes() {
		serie := CurveSeries{CacheType: t.String(), MaxSequences: []int64{}}
		for _, n := range c.Contexts {
			x := in
			x.KType, x.VType, x.Context, x.SharedPrefixes = t, t, n, nil
			r, err := Compute(x)
			if err != nil && !IsNoRoom(err) {
				serie.Error, serie.MaxSequences = err.Error(), []int64{}
				break
			}
			serie.MaxSequences = append(serie.MaxSequences, r.MaxSequences)
		}
		c.Types = append(c.Types, serie)
	}
	return c
}
