package plan

import "github.com/kvref/kvref/quant"

// TypeRow is one cache type's full-context arithmetic, keys and values both of that type:
// a row of `kvref inspect`.
type TypeRow struct {
	CacheType        string `json:"cache_type"`
	BytesPerToken    int64  `json:"bytes_per_token"`
	BytesPerSequence int64  `json:"bytes_per_sequence"` // a full context, without paging
	MaxSequences     int64  `json:"max_sequences"`      // full-context sequences beside the weights
	Error            string `json:"error,omitempty"`    // why the type cannot store the shape
}

// EveryCacheType plans in once per cache type (in.KType and in.VType are ignored). Where the
// weights leave no room the row says 0 sequences; a type that cannot store the shape, or an
// Input that cannot be planned, has an Error instead of numbers.
func EveryCacheType(in Input) []TypeRow {
	var rows []TypeRow
	for _, t := range quant.CacheTypes() {
		row := TypeRow{CacheType: t.String()}
		in.KType, in.VType = t, t
		r, err := Compute(in)
		if err != nil && !IsNoRoom(err) {
			row.Error = err.Error()
		} else {
			row.BytesPerToken, row.BytesPerSequence, row.MaxSequences = r.BytesPerToken, r.BytesPerSequence, r.MaxSequences
		}
		rows = append(rows, row)
	}
	return rows
}
