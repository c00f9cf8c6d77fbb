package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kvref/kvref/internal/plan"
	"github.com/kvref/kvref/kvcache"
	"github.com/kvref/kvref/quant"
)

func init() {
	register(command{"plan", "size the KV cache: bytes per token, and how many sequences fit in memory", planCmd})
}

// planFlags are the flags of `kvref plan`.
type planFlags struct {
	model, preset                   string
	list, tied, asJSON              bool
	layers, kvHeads, headDim, heads int
	dim, hidden, vocab              int
	cacheDtype, cacheK, cacheV      string
	ctx, blockSize, sharedPrefix    int
	mem, weights                    sizeFlag
	weightsDtype                    string
	set                             map[string]bool // flags given on the command line
}

// shapeFlagNames are the flags that describe a model without a file or preset.
var shapeFlagNames = []string{"layers", "kv-heads", "head-dim", "heads", "dim", "hidden", "vocab", "tied"}

// defaultShapeContext is the context planned for a shape given by flags without --ctx.
const defaultShapeContext = 4096

func planCmd(args []string, stdout, stderr io.Writer) error {
	var f planFlags
	fs := newFlags("plan", stderr)
	fs.StringVar(&f.model, "m", "", "model (GGUF file, Hugging Face directory, llama2.c checkpoint, hf:// reference): its shape and its real weight bytes")
	fs.StringVar(&f.preset, "preset", "", "a published model's shape (--preset list, or --list, shows them)")
	fs.BoolVar(&f.list, "list", false, "list the presets and where their shapes come from")
	fs.IntVar(&f.layers, "layers", 0, "shape: transformer layers")
	fs.IntVar(&f.kvHeads, "kv-heads", 0, "shape: key/value heads per layer")
	fs.IntVar(&f.headDim, "head-dim", 0, "shape: width of one head")
	fs.IntVar(&f.heads, "heads", 0, "shape: query heads (for the comparison without GQA and the parameter count)")
	fs.IntVar(&f.dim, "dim", 0, "shape: embedding width (default heads·head-dim; for the parameter count)")
	fs.IntVar(&f.hidden, "hidden", 0, "shape: feed-forward width (for the parameter count)")
	fs.IntVar(&f.vocab, "vocab", 0, "shape: vocabulary size (for the parameter count)")
	fs.BoolVar(&f.tied, "tied", false, "shape: the output projection shares the embedding (for the parameter count)")
	registerCacheTypes(fs, &f.cacheDtype, &f.cacheK, &f.cacheV, "f16")
	fs.IntVar(&f.ctx, "ctx", 0, fmt.Sprintf("tokens per full sequence (0: the model's context; %d for shape flags)", defaultShapeContext))
	fs.Var(&f.mem, "mem", "`SIZE` of the memory for weights and cache together, e.g. 80GB or 24GiB (default: this machine's MemAvailable)")
	fs.Var(&f.weights, "weights", "`SIZE` of the weights, e.g. 14GB (default: the file's tensors with -m, else an f16 estimate)")
	fs.StringVar(&f.weightsDtype, "weights-dtype", "", "estimate the weights as parameters × this type: "+weightTypeNames())
	fs.IntVar(&f.blockSize, "block-size", kvcache.DefaultBlockSize, "token slots per KV cache block")
	fs.IntVar(&f.sharedPrefix, "shared-prefix", 0, "tokens of prompt every sequence shares (default: compare ¼, ½ and ¾ of the context)")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object")
	fs.Usage = func() { planUsage(fs, stderr) }
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q (kvref plan takes flags only)", fs.Args())
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	if f.list || strings.EqualFold(f.preset, "list") {
		return printPresets(stdout)
	}

	m, err := resolvePlanModel(&f)
	if err != nil {
		return err
	}
	kType, vType, err := cacheTypes(f.cacheDtype, f.cacheK, f.cacheV)
	if err != nil {
		return err
	}
	in := plan.Input{Shape: m.shape, KType: kType, VType: vType, Context: f.ctx, BlockSize: f.blockSize}
	var notes []string
	if !f.set["ctx"] {
		in.Context = m.shape.Context
		if in.Context == 0 {
			in.Context = defaultShapeContext
			notes = append(notes, fmt.Sprintf("context %d is a default: set --ctx to plan another length", defaultShapeContext))
		}
	} else if m.shape.Context > 0 && f.ctx > m.shape.Context {
		notes = append(notes, fmt.Sprintf("--ctx %d is beyond the model's trained context of %d tokens", f.ctx, m.shape.Context))
	}
	if m.note != "" {
		notes = append(notes, m.note)
	}

	w, err := planWeights(&f, m)
	if err != nil {
		return err
	}
	in.Weights = w.bytes
	if w.note != "" {
		notes = append(notes, w.note)
	}
	mem := memorySource{bytes: f.mem.bytes, from: fmt.Sprintf("--mem %s = %d B", f.mem.text, f.mem.bytes)}
	if !f.mem.set() {
		if mem.bytes, err = plan.AvailableMemory(); err != nil {
			return fmt.Errorf("%v; say how much memory to plan for with --mem SIZE (e.g. --mem 16GiB)", err)
		}
		mem.from = fmt.Sprintf("this machine's MemAvailable, %d B (--mem plans for another)", mem.bytes)
	}
	in.Memory = mem.bytes

	in.SharedPrefixes = []int{0}
	switch {
	case f.set["shared-prefix"] && f.sharedPrefix != 0:
		in.SharedPrefixes = append(in.SharedPrefixes, f.sharedPrefix)
	case !f.set["shared-prefix"]:
		for _, n := range []int{in.Context / 4, in.Context / 2, 3 * in.Context / 4} {
			if n > in.SharedPrefixes[len(in.SharedPrefixes)-1] {
				in.SharedPrefixes = append(in.SharedPrefixes, n)
			}
		}
	}

	r, err := plan.Compute(in)
	var noRoom *plan.NoRoomError
	if errors.As(err, &noRoom) {
		return fmt.Errorf("the weights need %s (%s) but the memory is %s (%s): nothing is left for the KV cache, "+
			"whose full %d-token sequence needs %s (%s per token); give more --mem, or smaller --weights/--weights-dtype",
			plan.FormatSize(in.Weights), w.from, plan.FormatSize(in.Memory), mem.from, in.Context,
			plan.FormatSize(r.BlockBytesPerSequence), plan.FormatSize(r.BytesPerToken))
	}
	if err != nil {
		return err
	}
	if r.MaxSequences == 0 {
		notes = append(notes, fmt.Sprintf("not one full %d-token sequence fits: it needs %s and %s is left; try a shorter --ctx or a smaller --cache-dtype",
			in.Context, plan.FormatSize(r.BlockBytesPerSequence), plan.FormatSize(r.Left)))
	}
	if f.asJSON {
		return writePlanJSON(stdout, m, r, w, mem)
	}
	writePlanText(stdout, m, r, w, mem, notes)
	return nil
}

func planUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `usage: kvref plan [-m MODEL | --preset NAME | --layers L --kv-heads H --head-dim D [--heads Q]]
                  [--cache-dtype T | -ctk T -ctv T] [--ctx N] [--mem SIZE] [--weights SIZE | --weights-dtype T]
                  [--block-size B] [--shared-prefix N] [--json]

How many full-context sequences fit in memory, from the formula the cache is built on:

    bytes per token = 2 · layers · kv_heads · head_dim · bytes_per_element

(int8, fp8-e4m3 and the block types q8_0, q4_0, q4_1, iq4_nl, q5_0 and q5_1 add their
scales and minimums: layers × (K row + V row bytes), exactly as the cache stores them). A sequence of N tokens holds ceil(N / B) blocks; the memory left after
the weights holds floor(left / block bytes) blocks. Then the same plan without GQA, with
every cache type, and with a shared prompt prefix whose full blocks are stored once.

Sizes (--mem, --weights) are read as numfmt and Kubernetes read them:
80GB = 80G = 80·10^9 bytes, 80GiB = 80Gi = 80·2^30 bytes; also k, M, T, P and Ki, Mi,
Ti, Pi (case is ignored; B is bytes); fractions such as 1.5TB; a plain number is bytes.

kvref plan --list shows the presets.

flags:
`)
	fs.PrintDefaults()
}

// planModel is the model being planned and where its shape came from.
type planModel struct {
	name        string // preset name, file path or "shape flags"
	from        string // the preset's repository, the model's format ("gguf model", ...) or "flags"
	shape       plan.Shape
	fileWeights int64 // the tensors' real bytes with -m; -1 otherwise
	note        string
}

// resolvePlanModel finds the shape from exactly one of -m, --preset and the shape flags.
func resolvePlanModel(f *planFlags) (planModel, error) {
	var given []string
	shapeGiven := false
	for _, n := range shapeFlagNames {
		shapeGiven = shapeGiven || f.set[n]
	}
	if f.model != "" {
		given = append(given, "-m")
	}
	if f.preset != "" {
		given = append(given, "--preset")
	}
	if shapeGiven {
		given = append(given, "shape flags (--layers, --kv-heads, …)")
	}
	switch {
	case len(given) == 0:
		return planModel{}, fmt.Errorf("say which model to plan: -m MODEL.gguf, --preset NAME (one of %s), or --layers L --kv-heads H --head-dim D",
			strings.Join(plan.PresetNames(), ", "))
	case len(given) > 1:
		return planModel{}, fmt.Errorf("give only one of -m, --preset and the shape flags, not %s", strings.Join(given, " and "))
	}

	switch {
	case f.model != "":
		mdl, err := loadModel(f.model, io.Discard)
		if err != nil {
			return planModel{}, err
		}
		defer mdl.Close()
		return planModel{name: f.model, from: mdl.Format + " model", shape: mdl.Config.PlanShape(), fileWeights: mdl.Weights.Bytes()}, nil
	case f.preset != "":
		p, err := plan.LookupPreset(f.preset)
		if err != nil {
			return planModel{}, err
		}
		return planModel{name: p.Name, from: p.Repo, shape: p.Shape, fileWeights: -1, note: p.Note}, nil
	}
	var missing []string
	for _, n := range []struct {
		name string
		v    int
	}{{"--layers", f.layers}, {"--kv-heads", f.kvHeads}, {"--head-dim", f.headDim}} {
		if n.v == 0 {
			missing = append(missing, n.name)
		}
	}
	if len(missing) > 0 {
		return planModel{}, fmt.Errorf("a shape needs --layers, --kv-heads and --head-dim; missing %s", strings.Join(missing, ", "))
	}
	s := plan.Shape{Layers: f.layers, Heads: f.heads, KVHeads: f.kvHeads, HeadDim: f.headDim,
		Dim: f.dim, Hidden: f.hidden, Vocab: f.vocab, Tied: f.tied}
	if s.Dim == 0 && s.Heads > 0 {
		s.Dim = s.Heads * s.HeadDim
	}
	if err := s.Validate(); err != nil {
		return planModel{}, err
	}
	return planModel{name: "shape flags", from: "flags", shape: s, fileWeights: -1}, nil
}

// weightsSource is the weights' size and how it was found.
type weightsSource struct {
	bytes  int64
	params int64  // 0 when unknown
	from   string // one line: where the number comes from
	note   string // a caveat worth a note line; may be empty
}

// memorySource is the memory planned for and where it came from.
type memorySource struct {
	bytes int64
	from  string
}

// planWeights decides the weights' bytes: --weights, --weights-dtype × parameters, the
// file's tensors, or an f16 estimate from the parameter count.
func planWeights(f *planFlags, m planModel) (weightsSource, error) {
	params, known := m.shape.Params()
	w := weightsSource{params: params}
	switch {
	case f.weights.set() && f.weightsDtype != "":
		return w, fmt.Errorf("give --weights SIZE or --weights-dtype T, not both")
	case f.weights.set():
		w.bytes, w.from = f.weights.bytes, fmt.Sprintf("--weights %s = %d B", f.weights.text, f.weights.bytes)
		return w, nil
	case f.weightsDtype != "":
		t, err := plan.ParseWeightType(f.weightsDtype)
		if err != nil {
			return w, err
		}
		if !known {
			return w, fmt.Errorf("--weights-dtype needs the parameter count, so the shape needs --heads, --hidden and --vocab too (or give --weights SIZE)")
		}
		w.bytes, w.from = t.Bytes(params), fmt.Sprintf("%s estimate: %d parameters × %g bits", t.Name, params, t.BitsPerWeight())
		return w, nil
	case m.fileWeights >= 0:
		w.bytes, w.from = m.fileWeights, "the file's tensors"
		return w, nil
	case known:
		t := plan.DefaultWeightType
		w.bytes, w.from = t.Bytes(params), fmt.Sprintf("%s estimate: %d parameters × %g bits", t.Name, params, t.BitsPerWeight())
		return w, nil
	}
	w.from = "not counted"
	w.note = "the weights are not counted (the shape gives no parameter count): give --weights SIZE, or --heads, --hidden and --vocab"
	return w, nil
}

// printPresets writes the preset table and each preset's source.
func printPresets(w io.Writer) error {
	rows := [][]string{{"preset", "layers", "heads", "KV heads", "head dim", "context", "f16 per token", "parameters", "published as"}}
	for _, p := range plan.Presets() {
		s := p.Shape
		bpt, err := plan.BytesPerToken(s.Layers, s.KVHeads, s.HeadDim, quant.F16, quant.F16)
		if err != nil {
			return err
		}
		params, _ := s.Params()
		rows = append(rows, []string{p.Name, fmt.Sprint(s.Layers), fmt.Sprint(s.Heads), fmt.Sprint(s.KVHeads),
			fmt.Sprint(s.HeadDim), fmt.Sprint(s.Context), plan.FormatSize(bpt), formatCount(params), p.Repo})
	}
	writeTable(w, "", "lrrrrrrrl", rows)

	// Most presets share one list of source fields: print each list once.
	var sources []string
	names := map[string][]string{}
	for _, p := range plan.Presets() {
		if names[p.Source] == nil {
			sources = append(sources, p.Source)
		}
		names[p.Source] = append(names[p.Source], p.Name)
	}
	fmt.Fprintln(w, "\nwhere the shapes come from:")
	for _, src := range sources {
		fmt.Fprintf(w, "  %s\n    %s\n", strings.Join(names[src], ", "), src)
	}
	fmt.Fprintln(w, "\nnotes:")
	for _, p := range plan.Presets() {
		if p.Note != "" {
			fmt.Fprintf(w, "  %s: %s\n", p.Name, p.Note)
		}
	}
	return nil
}

// writePlanText writes the plan for people: the headline numbers with their arithmetic,
// then the three comparison tables.
func writePlanText(w io.Writer, m planModel, r plan.Report, ws weightsSource, mem memorySource, notes []string) {
	s := r.Shape
	desc := fmt.Sprintf("%d layers, %s%d KV heads of %d", s.Layers, countIf(s.Heads, "%d query heads, "), s.KVHeads, s.HeadDim)
	if ws.params > 0 {
		desc += ", " + formatCount(ws.params) + " parameters"
	}
	if s.Window > 0 {
		desc += fmt.Sprintf(", sliding window %d", s.Window)
	}
	name := m.name
	if m.from != "flags" {
		name += " (" + m.from + ")"
	}
	fmt.Fprintf(w, "model   %s: %s\n", name, desc)
	fmt.Fprintf(w, "cache   %s, %d-token sequences, blocks of %d tokens\n\n", cacheTypeName(r.KType, r.VType), r.Context, r.BlockSize)

	left := fmt.Sprintf("%d B = %d blocks of %s", r.Left, r.CacheBlocks, plan.FormatSize(r.BytesPerBlock))
	if r.Left == 0 {
		left = "0 B"
	}
	writeTable(w, "", "lrl", [][]string{
		{"per token", plan.FormatSize(r.BytesPerToken), tokenArithmetic(r)},
		{"per sequence", plan.FormatSize(r.BytesPerSequence), sequenceArithmetic(r)},
		{"in blocks", plan.FormatSize(r.BlockBytesPerSequence), blockArithmetic(r)},
		{"memory", plan.FormatSize(r.Memory), mem.from},
		{"weights", plan.FormatSize(r.Weights), ws.from},
		{"left for the cache", plan.FormatSize(r.Left), left},
		{"max sequences", fmt.Sprint(r.MaxSequences), fmt.Sprintf("full %d-token sequences at once", r.Context)},
	})

	fmt.Fprintln(w)
	switch {
	case r.WithoutGQA == nil:
		fmt.Fprintln(w, "GQA: give --heads to compare with one KV head per query head")
	case s.Heads == s.KVHeads:
		fmt.Fprintf(w, "GQA: none, every one of the %d query heads has its own KV head already\n", s.Heads)
	default:
		g := r.WithoutGQA
		fmt.Fprintf(w, "GQA: each KV head serves %d query heads; without GQA every query head has its own (weights unchanged):\n", s.GQAGroup())
		writeTable(w, "  ", "lrrrr", [][]string{
			{"", "KV heads", "per token", "per sequence", "sequences"},
			{"with GQA", fmt.Sprint(s.KVHeads), plan.FormatSize(r.BytesPerToken), plan.FormatSize(r.BlockBytesPerSequence), fmt.Sprint(r.MaxSequences)},
			{"without", fmt.Sprint(g.KVHeads), plan.FormatSize(g.BytesPerToken), plan.FormatSize(g.BlockBytesPerSequence), fmt.Sprint(g.MaxSequences)},
		})
		fmt.Fprintf(w, "  without GQA a token costs %d× the bytes\n", g.BytesPerToken/r.BytesPerToken)
	}

	fmt.Fprintln(w, "\ncache types (keys and values both stored as):")
	rows := [][]string{{"", "stores per value", "per token", "per sequence", "sequences"}}
	for _, v := range r.CacheTypes {
		name := v.KType.String()
		if v.KType == r.KType && v.VType == r.VType {
			name += " *"
		}
		if v.Err != nil {
			rows = append(rows, []string{name, storesPerValue(v.KType), "-", "-", "kv_heads·head_dim not a multiple of 32"})
			continue
		}
		rows = append(rows, []string{name, storesPerValue(v.KType), plan.FormatSize(v.BytesPerToken), plan.FormatSize(v.BlockBytesPerSequence), fmt.Sprint(v.MaxSequences)})
	}
	writeTable(w, "  ", "llrrr", rows)

	fmt.Fprintf(w, "\nshared prefix (every sequence starts with the same prompt; its full blocks are stored once):\n")
	rows = [][]string{{"prefix", "shared blocks", "own blocks", "sequences"}}
	for _, p := range r.SharedPrefixes {
		name := "none"
		if p.Tokens > 0 {
			name = fmt.Sprintf("%d tokens", p.Tokens)
		}
		rows = append(rows, []string{name, fmt.Sprint(p.SharedBlocks), fmt.Sprint(p.OwnBlocks), fmt.Sprint(p.MaxSequences)})
	}
	writeTable(w, "  ", "lrrr", rows)

	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
}

// tokenArithmetic spells out how the bytes per token come about.
func tokenArithmetic(r plan.Report) string {
	s := r.Shape
	if e, ok := elementBytes(r.KType); ok && r.KType == r.VType {
		return fmt.Sprintf("2 · %d layers · %d KV heads · %d · %d B = %d B", s.Layers, s.KVHeads, s.HeadDim, e, r.BytesPerToken)
	}
	return fmt.Sprintf("%d layers × (%d B K row + %d B V row) = %d B", s.Layers, r.KRowBytes, r.VRowBytes, r.BytesPerToken)
}

// sequenceArithmetic spells out the bytes of one full sequence: its tokens, or with a sliding
// window the window's.
func sequenceArithmetic(r plan.Report) string {
	if w := r.Shape.Window; w > 0 && w < r.Context {
		return fmt.Sprintf("%d tokens of the sliding window (of %d) × %d B", w, r.Context, r.BytesPerToken)
	}
	return fmt.Sprintf("%d tokens × %d B", r.Context, r.BytesPerToken)
}

// blockArithmetic spells out the block rounding of one sequence.
func blockArithmetic(r plan.Report) string {
	s := fmt.Sprintf("%d blocks of %d tokens, %s each", r.BlocksPerSequence, r.BlockSize, plan.FormatSize(r.BytesPerBlock))
	if w := r.Shape.Window; w > 0 && w < r.Context {
		return s + " (the window spans at most this many; the blocks it has left are released)"
	}
	if pad := r.BlocksPerSequence*r.BlockSize - r.Context; pad > 0 {
		s += fmt.Sprintf(" (%d slots of the last block unused)", pad)
	}
	return s
}

// elementBytes is the size of one stored value of an unscaled cache type.
func elementBytes(t quant.CacheType) (int, bool) {
	switch t {
	case quant.F32:
		return 4, true
	case quant.F16, quant.BF16:
		return 2, true
	case quant.FP8E5M2:
		return 1, true
	}
	return 0, false
}

// storesPerValue says in a few words what a cache type stores per value.
func storesPerValue(t quant.CacheType) string {
	if e, ok := elementBytes(t); ok {
		return fmt.Sprintf("%d B", e)
	}
	if values, bytes := t.Block(); values > 0 {
		return fmt.Sprintf("%d B per %d values", bytes, values)
	}
	switch t {
	case quant.Int8, quant.FP8E4M3:
		return "1 B + 4 B scale per head"
	}
	return t.String()
}

// cacheTypeName is "f16" when keys and values share a type, else "keys q8_0, values f16".
func cacheTypeName(k, v quant.CacheType) string {
	if k == v {
		return k.String()
	}
	return fmt.Sprintf("keys %v, values %v", k, v)
}

// countIf formats n with format, or returns "" when n is 0 (unknown).
func countIf(n int, format string) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(format, n)
}

// formatCount prints a parameter count as model cards do: "6.74B", "134.5M".
func formatCount(n int64) string {
	switch {
	case n == 0:
		return "?"
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	}
	return fmt.Sprint(n)
}

// writeTable writes rows with columns aligned: align has one letter per column, l (left)
// or r (right). Every line starts with indent.
func writeTable(w io.Writer, indent, align string, rows [][]string) {
	widths := make([]int, len(align))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range row {
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
			if i > 0 {
				b.WriteString("  ")
			}
			if align[i] == 'r' {
				b.WriteString(pad + c)
			} else if i < len(row)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// weightTypeNames lists the --weights-dtype names.
func weightTypeNames() string {
	var s []string
	for _, t := range plan.WeightTypes() {
		s = append(s, fmt.Sprintf("%s (%g bits)", t.Name, t.BitsPerWeight()))
	}
	return strings.Join(s, ", ")
}

func writePlanJSON(w io.Writer, m planModel, r plan.Report, ws weightsSource, mem memorySource) error {
	out := r.JSON(plan.ModelInfo{Name: m.name, From: m.from, Params: ws.params}, mem.from, ws.from)
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}
