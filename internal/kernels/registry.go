package kernels

import (
	"fmt"
	"os"
	"strings"
)

// The kernel registry: every fast implementation the package has, the CPU features it
// needs, and the portable Go twin that defines its result. The dispatch code reads an
// implementation's on flag and nothing else; which flags are on is decided here, once at
// start-up from the CPU (and KVREF_KERNELS), and again by SetPortable and Restrict. The
// implementation report (Implementations) is read off the same table.
//
// To add a fast kernel: declare its impl below, list it in registry under its kernel (a
// faster one before the slower ones whose features it includes), branch on its on flag in
// the dispatch code, and test it against its twin through forEachLevel, which the package's
// TestMain checks every implementation this CPU can run went through.

// feature is a set of CPU features.
type feature uint32

// The CPU features the fast kernels need.
const (
	featAVX feature = 1 << iota
	featAVX2
	featFMA
	featF16C
	featAVX512F
	featAVX512BW
	featAVX512DQ
	featAVX512VL
	featAVX512VNNI
)

var featureNames = []string{"AVX", "AVX2", "FMA", "F16C", "AVX-512F", "AVX-512BW", "AVX-512DQ", "AVX-512VL", "AVX-512 VNNI"}

// String lists the features, "none" for the empty set.
func (f feature) String() string {
	var names []string
	for i, n := range featureNames {
		if f&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// short names the features the way the report shows them: AVX is left out beside AVX2 or
// AVX-512, AVX2 and F16C beside AVX-512 (every CPU with AVX-512 has them, though the
// registry checks each), and the AVX-512 subsets are joined ("AVX-512 F/BW/VNNI").
func (f feature) short() string {
	if f&(featAVX2|featAVX512F) != 0 {
		f &^= featAVX
	}
	if f&featAVX512F != 0 {
		f &^= featAVX2 | featF16C
	}
	var names, avx512 []string
	for i, n := range featureNames {
		switch b := feature(1) << i; {
		case f&b == 0:
		case b >= featAVX512F:
			avx512 = append(avx512, strings.TrimPrefix(strings.TrimPrefix(n, "AVX-512"), " "))
		default:
			names = append(names, n)
		}
	}
	if len(avx512) > 0 {
		names = append(names, "AVX-512 "+strings.Join(avx512, "/"))
	}
	return strings.Join(names, ", ")
}

// The feature sets of the fast paths, each including the one before.
const (
	setAVX    = featAVX
	setAVX2   = setAVX | featAVX2 | featF16C
	setAVX512 = setAVX2 | featAVX512F
	setVNNI   = setAVX512 | featAVX512BW | featAVX512DQ | featAVX512VL | featAVX512VNNI
)

// impl is one fast implementation of a kernel.
type impl struct {
	name  string  // the routines that run, as named in the source
	needs feature // the CPU features they need
	on    bool    // whether the dispatch code uses it now
	// detail, when set, says what the implementation chooses on this CPU beyond its
	// features (which micro-kernel, and why).
	detail func() string
}

// kernel is one operation of the package with its implementations.
type kernel struct {
	name     string  // what it computes, as the package exports it
	portable string  // the Go function that defines the result, bit for bit
	impls    []*impl // fast implementations, fastest first (none: only the portable Go)
}

// The fast implementations, one flag each for the dispatch code.
var (
	implDotAVX            = &impl{name: "dotAVXAsm", needs: setAVX}
	implAxpyAVX           = &impl{name: "axpyAVXAsm", needs: setAVX}
	implAxpyRowsAVX       = &impl{name: "axpyRowsAVXAsm", needs: setAVX}
	implAxpyRowsAVX512    = &impl{name: "axpyRowsAVX512Asm", needs: setAVX512}
	implAxpyF16AVX2       = &impl{name: "axpyF16RowsAVX2Asm, axpyF16RowsNextAVX2Asm", needs: setAVX2}
	implMatVecAVX         = &impl{name: "dotRowsX4AVX, dotRowsQ4AVX, dotRowsAVX", needs: setAVX}
	implMatMulAVX512      = &impl{name: "gemm8x6AVX512, gemm8x2AVX512, gemm8x6BAVX512, gemm8x2BAVX512, gemm4x6AVX512, gemm4x4AVX512, gemm4x8AVX512, dot4x4AVX512, packInputsDupAVX512, packInputBlocksAVX512", needs: setAVX | featAVX512F | featAVX512VL, detail: zmmWidthDetail}
	implMatMulAVX         = &impl{name: "gemm2x6AVX, gemm2x4AVX, dot4x2AVX, dot4x1AVX", needs: setAVX}
	implHalfAVX512        = &impl{name: "dotF16x4x4AVX512, dotBF16x4x4AVX512", needs: setAVX512 | featAVX512VL}
	implHalfAVX512x8      = &impl{name: "dotF16x4x8AVX512, dotF16x4x4ZAVX512, dotBF16x4x8AVX512, dotBF16x4x4ZAVX512", needs: setAVX512 | featAVX512VL}
	implF16AVX2           = &impl{name: "dotF16x4AVX2, dotF16x4NextAVX2, dotF16Q4AVX2, dotF16x4x2AVX2, dotF16Q4x2AVX2, dotF16AVX2Asm", needs: setAVX2}
	implBF16AVX2          = &impl{name: "dotBF16x4AVX2, dotBF16Q4AVX2, dotBF16x4x2AVX2, dotBF16Q4x2AVX2, dotBF16AVX2Asm", needs: setAVX2}
	implQ8Q8VNNI          = &impl{name: "dotQ8_0Q8x4AVX512", needs: setVNNI}
	implQ8Q8AVX2          = &impl{name: "dotQ8_0Q8x4AVX2, dotQ8_0Q8AVX2", needs: setAVX2}
	implQ8GemmVNNI        = &impl{name: "gemmQ8x2x4VNNI", needs: setVNNI}
	implQ8GemmAVX2        = &impl{name: "gemmQ8x1x4AVX2", needs: setAVX2}
	implLegacyGemmVNNI    = &impl{name: "gemmQ4_0x2x4VNNI, gemmQ5_0x2x4VNNI", needs: setVNNI}
	implLegacyRewriteAVX2 = &impl{name: "q4_0AsQ8_0AVX2, q5_0AsQ8_0AVX2", needs: setAVX2}
	implQuantizeQ8VNNI    = &impl{name: "quantizeQ8AVX512", needs: setVNNI}
	implQuantizeQ8AVX2    = &impl{name: "quantizeQ8AVX2", needs: setAVX2}
	implLegacyQ8VNNI      = &impl{name: "dotQ4_0Q8x4AVX512, dotQ4_1Q8x4AVX512, dotQ5_0Q8x4AVX512, dotQ5_1Q8x4AVX512", needs: setVNNI}
	implLegacyQ8AVX2      = &impl{name: "dotQ4_0Q8x4AVX2, dotQ4_1Q8x4AVX2, dotQ5_0Q8x4AVX2, dotQ5_1Q8x4AVX2", needs: setAVX2}
	implKRowsVNNI         = &impl{name: "dotQ2_Kx4AVX512 ... dotQ6_Kx4AVX512, dotQ4_Kx4ZAVX512, dotQ4_Kx2x2ZAVX512, dotQ5_Kx2x2AVX512", needs: setVNNI, detail: kRowsDetail}
	implKRowsAVX2         = &impl{name: "dotQ2_Kx4AVX2 ... dotQ6_Kx4AVX2", needs: setAVX2}
	implKBatchVNNI        = &impl{name: "prepQ2_KAVX512 ... prepQ6_KAVX512, gemmK32MinAVX512, gemmK16MinAVX512, gemmK16SignedAVX512", needs: setVNNI, detail: kTileDetail}
	implKBatchAVX2        = &impl{name: "dotQ2_KV4AVX2 ... dotQ6_KV4AVX2", needs: setAVX2}
	implQuantizeQ8KVNNI   = &impl{name: "quantizeQ8KAVX512", needs: setVNNI}
	implQuantizeQ8KAVX2   = &impl{name: "quantizeQ8KAVX2", needs: setAVX2}
	implExpAVX512         = &impl{name: "expShiftedAVX512, swigluAVX512", needs: setAVX512 | featFMA}
	implExpAVX2           = &impl{name: "expShiftedAVX2, swigluAVX2", needs: setAVX2 | featFMA}
	implDecodeF16AVX2     = &impl{name: "decodeF16AVX2Asm, encodeF16AVX2Asm, decodeF16StridedAVX2Asm", needs: setAVX2}
	implDecodeQ8_0AVX2    = &impl{name: "decodeQ8_0StridedAVX2Asm", needs: setAVX2}
	implDecodeQ8_0AVX512  = &impl{name: "decodeQ8_0StridedAVX512Asm", needs: setAVX512}
	implQ8HeadsAVX2       = &impl{name: "dotQ8_0x4NextAVX2, axpyQ8_0RowsNextAVX2Asm", needs: setAVX2}
	implPrefetchAVX       = &impl{name: "prefetchLines, prefetchLinesL2", needs: setAVX}
	implScaleAVX          = &impl{name: "scaleAVXAsm, maxLanesAVXAsm", needs: setAVX}
)

// registry lists every kernel with a fast path, in the order of the report.
var registry = []*kernel{
	{"Dot", "dotGeneric", []*impl{implDotAVX}},
	{"Axpy", "axpyGeneric", []*impl{implAxpyAVX}},
	{"AxpyRows, AxpyRowsStrided", "axpyRowsGeneric", []*impl{implAxpyRowsAVX512, implAxpyRowsAVX}},
	{"AxpyF16RowsStrided (an f16 cache's values)", "axpyF16RowsGeneric", []*impl{implAxpyF16AVX2}},
	{"MatMulRows, batch 1 (f32 decode)", "matMulRowsGeneric", []*impl{implMatVecAVX}},
	{"MatMulRows, MatMulRowsDecoded, batch ≥ 2 (prefill)", "matMulRowsGeneric, matMulRowsDecodedGeneric", []*impl{implMatMulAVX512, implMatMulAVX}},
	{"DotF16, DotF16Rows, MatMulF16 small batches (f16 weights)", "dotF16Generic", []*impl{implF16AVX2}},
	{"DotBF16, DotBF16Rows, MatMulBF16 small batches (bf16 weights)", "dotBF16Generic", []*impl{implBF16AVX2}},
	{"MatMulF16, MatMulBF16 batch 4-64, eight or four inputs at a time, two per ZMM", "matMulHalfGeneric", []*impl{implHalfAVX512x8}},
	{"MatMulF16, MatMulBF16 batch ≤ 24, four inputs at a time", "matMulHalfGeneric", []*impl{implHalfAVX512}},
	{"DotQ8_0Q8Rows (q8_0 weights × Q8_0 input)", "q8RowsGeneric", []*impl{implQ8Q8VNNI, implQ8Q8AVX2}},
	{"DotQ8_0Batch, DotQ4_0Batch, DotQ5_0Batch (q8_0 weights, and q4_0, q5_0 rewritten as q8_0; batch ≥ 2)", "matMulQ8_0Generic", []*impl{implQ8GemmVNNI, implQ8GemmAVX2}},
	{"DotQ4_0Batch, DotQ5_0Batch (q4_0, q5_0 weights where they lie; batch 4-48)", "legacyRowsGeneric", []*impl{implLegacyGemmVNNI}},
	{"DotQ4_0Batch, DotQ5_0Batch: the rows rewritten as q8_0", "q4_0AsQ8_0Generic, q5_0AsQ8_0Generic", []*impl{implLegacyRewriteAVX2}},
	{"DotQ4_0Q8Rows ... DotQ5_1Q8Rows (q4_0, q4_1, q5_0, q5_1 weights × Q8_0/Q8_1 input)", "legacyRowsGeneric", []*impl{implLegacyQ8VNNI, implLegacyQ8AVX2}},
	{"DotQ2_KRows ... DotQ6_KRows (k-quant weights × Q8_K input)", "kRowsGeneric", []*impl{implKRowsVNNI, implKRowsAVX2}},
	{"DotQ2_KBatch ... DotQ6_KBatch (k-quant weights, batch ≥ 4)", "kBatchGeneric", []*impl{implKBatchVNNI, implKBatchAVX2}},
	{"Q8KInput.Quantize (the Q8_K input)", "quantizeQ8KGeneric", []*impl{implQuantizeQ8KVNNI, implQuantizeQ8KAVX2}},
	{"Q8Input.Quantize (the Q8_0 input)", "quantizeBlocksGeneric", []*impl{implQuantizeQ8VNNI, implQuantizeQ8AVX2}},
	{"Scale, Softmax's maximum and scaling", "scaleGeneric, maxGeneric", []*impl{implScaleAVX}},
	{"Softmax, SwiGLU exponentials", "expShiftedGeneric, swigluGeneric", []*impl{implExpAVX512, implExpAVX2}},
	{"DecodeF16, DecodeF16Strided, EncodeF16", "decodeF16Generic, decodeF16StridedGeneric, encodeF16Generic", []*impl{implDecodeF16AVX2}},
	{"DecodeQ8_0Strided (a q8_0 cache's keys and values)", "decodeQ8_0StridedGeneric", []*impl{implDecodeQ8_0AVX512, implDecodeQ8_0AVX2}},
	{"DotQ8_0HeadsStrided, AxpyQ8_0HeadsStrided (a q8_0 cache's keys and values, in place)", "dotQ8_0RowsStridedGeneric, axpyQ8_0RowsGeneric", []*impl{implQ8HeadsAVX2}},
	{"Prefetch, PrefetchL2 (hints, no result)", "nothing", []*impl{implPrefetchAVX}},
}

// Levels are the feature sets Restrict accepts, from the portable Go to the widest
// vectors: each allows the fast implementations whose features it includes (and the CPU
// has).
var levels = []struct {
	name     string
	features feature
}{
	{"generic", 0},
	{"avx", setAVX},
	{"avx2", setAVX2 | featFMA},
	{"avx512", ^feature(0)},
}

// Levels returns the names Restrict accepts, from the portable Go to the widest vectors:
// generic, avx, avx2, avx512.
func Levels() []string {
	names := make([]string, len(levels))
	for i, l := range levels {
		names[i] = l.name
	}
	return names
}

// allowed is the feature set that Restrict (or KVREF_KERNELS) chose; SetPortable(false)
// returns to it. inEffect is the set the flags follow now.
var allowed, inEffect = ^feature(0), ^feature(0)

// KVREF_KERNELS, when set to a level name, restricts the kernels from the start, as
// Restrict does: KVREF_KERNELS=avx2 go test ./... runs every test on the AVX2 kernels of an
// AVX-512 machine.
func init() {
	if env := os.Getenv("KVREF_KERNELS"); env != "" {
		f, err := levelByName(env)
		if err != nil {
			fmt.Fprintf(os.Stderr, "kvref: KVREF_KERNELS: %v; using every kernel this CPU has\n", err)
			f = ^feature(0)
		}
		allowed = f
	}
	apply(allowed)
}

// apply turns on exactly the implementations whose features lie in both the CPU's and f.
func apply(f feature) {
	inEffect = f
	for _, k := range registry {
		for _, i := range k.impls {
			i.on = i.supported() && i.needs&^f == 0
		}
	}
}

// supported reports whether this build and CPU can run i.
func (i *impl) supported() bool { return i.needs&^cpuFeatures == 0 }

// active returns the implementation of k that runs now: the first one that is on, or nil
// when the portable twin runs.
func (k *kernel) active() *impl {
	for _, i := range k.impls {
		if i.on {
			return i
		}
	}
	return nil
}

// levelByName returns the features of the named level.
func levelByName(name string) (feature, error) {
	for _, l := range levels {
		if l.name == name {
			return l.features, nil
		}
	}
	return 0, fmt.Errorf("kernels: unknown kernel level %q (want one of %s)", name, strings.Join(Levels(), ", "))
}

// Restrict limits the kernels to the fast implementations of the named level (see
// Levels) that the CPU can run: "avx2" makes an AVX-512 machine run what an AVX2-only one
// runs, "generic" is the portable Go, "avx512" everything the CPU has. Every level
// computes the same bits. It returns the level that was in force before, for restoring.
// It must not be called while any kernel runs.
func Restrict(level string) (previous string, err error) {
	f, err := levelByName(level)
	if err != nil {
		return "", err
	}
	previous = levelName(allowed)
	allowed = f
	apply(f)
	return previous, nil
}

// SetPortable switches every kernel of the package to its portable Go version (on true)
// or back to the level chosen by Restrict or at start-up (on false), so that a benchmark
// can measure both in one run. It must not be called while any kernel runs. In a purego
// build every kernel is always portable.
func SetPortable(on bool) {
	if on {
		apply(0)
		return
	}
	apply(allowed)
}

// Enabled reports whether the CPU has the named feature and the kernels may use it now
// (Restrict, KVREF_KERNELS and SetPortable limit it as they limit the kernels). The names
// are those the report uses: AVX, AVX2, FMA, F16C, AVX-512F, AVX-512BW, AVX-512DQ,
// AVX-512VL and AVX-512 VNNI; any other name is false. The machine probes of
// internal/benchmark/probe choose their loops with it.
func Enabled(name string) bool {
	for i, n := range featureNames {
		if n == name {
			return cpuFeatures&inEffect&(1<<i) != 0
		}
	}
	return false
}

// Implementation names the widest vectors the fast kernels use now: "avx512" when an
// AVX-512 kernel may run, "avx2" for the AVX2 kernels, "avx" for the AVX ones alone, and
// "generic" for the portable Go (on CPUs without AVX, with -tags purego, on other
// architectures, or after SetPortable(true) or Restrict("generic")). All compute the same
// bits; Implementations says which routine runs for each kernel.
func Implementation() string {
	f := cpuFeatures & inEffect
	switch {
	case f&featAVX512F != 0 && f&featAVX != 0:
		return "avx512"
	case f&setAVX2 == setAVX2:
		return "avx2"
	case f&featAVX != 0:
		return "avx"
	}
	return "generic"
}

// A Choice says which implementation of one kernel runs.
type Choice struct {
	Kernel   string   `json:"kernel"`          // the operation
	Impl     string   `json:"impl"`            // the routines that run, "" for the portable twin
	Needs    string   `json:"needs,omitempty"` // the CPU features Impl uses
	Portable string   `json:"portable"`        // the Go twin that defines the bits
	Skipped  []string `json:"skipped,omitempty"`
	// Skipped lists the faster implementations that do not run, each with the reason.
	Detail string `json:"detail,omitempty"` // what Impl chooses on this CPU, when that depends on more than its features
}

// Implementations reports, for every kernel with a fast path, which implementation runs
// now and why the faster ones do not.
func Implementations() []Choice {
	var out []Choice
	for _, k := range registry {
		c := Choice{Kernel: k.name, Portable: k.portable}
		if a := k.active(); a != nil {
			c.Impl, c.Needs = a.name, a.needs.short()
			if a.detail != nil {
				c.Detail = a.detail()
			}
		}
		for _, i := range k.impls {
			if i.on {
				break
			}
			c.Skipped = append(c.Skipped, i.name+": "+i.whyOff())
		}
		out = append(out, c)
	}
	return out
}

// whyOff says why i does not run.
func (i *impl) whyOff() string {
	switch {
	case !asmBuild:
		return "this build has no assembly (-tags purego or not amd64)"
	case !i.supported():
		return "this CPU lacks " + (i.needs &^ cpuFeatures).String()
	case inEffect == 0:
		return "portable kernels selected (SetPortable)"
	}
	return "kernels restricted to " + levelName(inEffect) + " (KVREF_KERNELS or Restrict)"
}

// levelName names the level with features f.
func levelName(f feature) string {
	for _, l := range levels {
		if l.features == f {
			return l.name
		}
	}
	return f.String()
}

// ReportLines formats a report from Implementations as aligned text, one line per kernel
// saying what runs, then one per faster implementation that does not and why.
func ReportLines(cs []Choice) []string {
	width := 0
	for _, c := range cs {
		width = max(width, len([]rune(c.Kernel)))
	}
	var lines []string
	for _, c := range cs {
		pad := strings.Repeat(" ", width-len([]rune(c.Kernel)))
		switch {
		case c.Impl != "" && c.Detail != "":
			lines = append(lines, fmt.Sprintf("%s%s  %s (%s; twin %s); %s", c.Kernel, pad, c.Impl, c.Needs, c.Portable, c.Detail))
		case c.Impl != "":
			lines = append(lines, fmt.Sprintf("%s%s  %s (%s; twin %s)", c.Kernel, pad, c.Impl, c.Needs, c.Portable))
		default:
			lines = append(lines, fmt.Sprintf("%s%s  portable Go: %s", c.Kernel, pad, c.Portable))
		}
		for _, s := range c.Skipped {
			lines = append(lines, fmt.Sprintf("%s    not %s", strings.Repeat(" ", width), s))
		}
	}
	return lines
}
