package plan

// JSON is a plan as `kvref plan --json` prints it. Sizes are exact bytes.
type JSON struct {
	Model                 ModelJSON     `json:"model"`
	CacheTypeK            string        `json:"cache_type_k"`
	CacheTypeV            string        `json:"cache_type_v"`
	Context               int           `json:"context"`
	BlockSize             int           `json:"block_size"`
	KRowBytes             int64         `json:"k_row_bytes"`
	VRowBytes             int64         `json:"v_row_bytes"`
	BytesPerToken         int64         `json:"bytes_per_token"`
	BytesPerSequence      int64         `json:"bytes_per_sequence"`
	BlocksPerSequence     int           `json:"blocks_per_sequence"`
	BytesPerBlock         int64         `json:"bytes_per_block"`
	BlockBytesPerSequence int64         `json:"block_bytes_per_sequence"`
	MemoryBytes           int64         `json:"memory_bytes"`
	MemoryFrom            string        `json:"memory_from"`
	WeightsBytes          int64         `json:"weights_bytes"`
	WeightsFrom           string        `json:"weights_from"`
	LeftBytes             int64         `json:"left_bytes"`
	CacheBlocks           int64         `json:"cache_blocks"`
	MaxSequences          int64         `json:"max_sequences"`
	WithoutGQA            *VariantJSON  `json:"without_gqa"`
	CacheTypes            []VariantJSON `json:"cache_types"`
	SharedPrefix          []PrefixJSON  `json:"shared_prefix"`
	// Groups are the kinds of layer of a model with cache groups (sliding layers beside
	// full ones), full first; absent for a uniform model.
	Groups []GroupJSON `json:"groups,omitempty"`
}

// GroupJSON is one kind of layer of a plan with cache groups (GroupPlan).
type GroupJSON struct {
	Window             int   `json:"window"` // 0: full attention
	Layers             int   `json:"layers"`
	Groups             int   `json:"groups"`
	LayersPerGroup     int   `json:"layers_per_group"`
	BytesPerToken      int64 `json:"bytes_per_token"`
	Tokens             int   `json:"tokens"`               // held at the context: it, or the window
	BytesPerSequence   int64 `json:"bytes_per_sequence"`   // with the window
	BytesWithoutWindow int64 `json:"bytes_without_window"` // as if every layer attended over everything
	BlocksPerSequence  int   `json:"blocks_per_sequence"`  // all groups of the kind
}

// ModelJSON is the planned model's shape in JSON.
type ModelJSON struct {
	Name       string `json:"name"`
	From       string `json:"from"`
	Layers     int    `json:"layers"`
	Heads      int    `json:"heads"`
	KVHeads    int    `json:"kv_heads"`
	HeadDim    int    `json:"head_dim"`
	Dim        int    `json:"dim"`
	Hidden     int    `json:"hidden_dim"`
	Vocab      int    `json:"vocab_size"`
	Context    int    `json:"context"`
	Tied       bool   `json:"tied_output"`
	Parameters int64  `json:"parameters"`
}

// VariantJSON is one variant of the plan (another cache type, or no GQA) in JSON.
type VariantJSON struct {
	KVHeads               int    `json:"kv_heads"`
	CacheTypeK            string `json:"cache_type_k"`
	CacheTypeV            string `json:"cache_type_v"`
	BytesPerToken         int64  `json:"bytes_per_token"`
	BlockBytesPerSequence int64  `json:"block_bytes_per_sequence"`
	MaxSequences          int64  `json:"max_sequences"`
	Error                 string `json:"error,omitempty"`
}

// PrefixJSON is one shared-prefix line of the plan in JSON.
type PrefixJSON struct {
	Tokens       int   `json:"prefix_tokens"`
	SharedBlocks int   `json:"shared_blocks"`
	OwnBlocks    int   `json:"own_blocks"`
	MaxSequences int64 `json:"max_sequences"`
}

func toVariantJSON(v Variant) VariantJSON {
	out := VariantJSON{KVHeads: v.KVHeads, CacheTypeK: v.KType.String(), CacheTypeV: v.VType.String(),
		BytesPerToken: v.BytesPerToken, BlockBytesPerSequence: v.BlockBytesPerSequence, MaxSequences: v.MaxSequences}
	if v.Err != nil {
		out.Error = v.Err.Error()
	}
	return out
}

// ModelInfo names the planned model in a report: its name, where its shape came from, and
// its parameter count (0: unknown).
type ModelInfo struct {
	Name, From string
	Params     int64
}

// JSON returns the report as JSON shows it, with where the memory and weights figures came
// from.
func (r Report) JSON(m ModelInfo, memoryFrom, weightsFrom string) JSON {
	s := r.Shape
	out := JSON{
		Model: ModelJSON{Name: m.Name, From: m.From, Layers: s.Layers, Heads: s.Heads, KVHeads: s.KVHeads, HeadDim: s.HeadDim,
			Dim: s.Dim, Hidden: s.Hidden, Vocab: s.Vocab, Context: s.Context, Tied: s.Tied, Parameters: m.Params},
		CacheTypeK: r.KType.String(), CacheTypeV: r.VType.String(), Context: r.Context, BlockSize: r.BlockSize,
		KRowBytes: r.KRowBytes, VRowBytes: r.VRowBytes, BytesPerToken: r.BytesPerToken, BytesPerSequence: r.BytesPerSequence,
		BlocksPerSequence: r.BlocksPerSequence, BytesPerBlock: r.BytesPerBlock, BlockBytesPerSequence: r.BlockBytesPerSequence,
		MemoryBytes: r.Memory, MemoryFrom: memoryFrom, WeightsBytes: r.Weights, WeightsFrom: weightsFrom,
		LeftBytes: r.Left, CacheBlocks: r.CacheBlocks, MaxSequences: r.MaxSequences,
	}
	if r.WithoutGQA != nil {
		v := toVariantJSON(*r.WithoutGQA)
		out.WithoutGQA = &v
	}
	for _, v := range r.CacheTypes {
		out.CacheTypes = append(out.CacheTypes, toVariantJSON(v))
	}
	for _, g := range r.Groups {
		out.Groups = append(out.Groups, GroupJSON{Window: g.Window, Layers: g.Layers, Groups: g.Groups, LayersPerGroup: g.LayersPerGroup,
			BytesPerToken: g.BytesPerToken, Tokens: g.Tokens, BytesPerSequence: g.Bytes, BytesWithoutWindow: g.BytesNoWindow, BlocksPerSequence: g.Blocks})
	}
	for _, p := range r.SharedPrefixes {
		out.SharedPrefix = append(out.SharedPrefix, PrefixJSON(p))
	}
	return out
}
