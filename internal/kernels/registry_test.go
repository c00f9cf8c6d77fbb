package kernels

import (
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// covered records the fast implementations the twin tests ran, through use.
var covered = map[*impl]bool{}

// use records that a test is about to run kernel k (named by any of its implementations)
// with the implementations now on: the one that runs is covered.
func use(of *impl) {
	for _, k := range registry {
		if slices.Contains(k.impls, of) {
			if a := k.active(); a != nil {
				covered[a] = true
			}
			return
		}
	}
	panic("test bug: " + of.name + " is not in the registry")
}

// testable reports whether the tests can run i here: this build and CPU have it, and
// KVREF_KERNELS (or an earlier Restrict) allows it.
func (i *impl) testable() bool { return i.supported() && i.needs&^allowed == 0 }

// testLevels returns the levels whose kernels the twin tests run, widest first: every
// level this CPU and KVREF_KERNELS allow that turns on a different set of
// implementations from the levels before it (on an AVX2-only CPU, "avx512" runs what
// "avx2" runs and is left out).
func testLevels() []string {
	var names, seen []string
	for _, l := range levels { // narrowest first, so that a duplicate keeps the narrower name
		if l.features&^allowed != 0 {
			continue
		}
		var on []string
		for _, k := range registry {
			for _, im := range k.impls {
				if im.testable() && im.needs&^l.features == 0 {
					on = append(on, im.name)
				}
			}
		}
		if key := strings.Join(on, ";"); !slices.Contains(seen, key) {
			seen = append(seen, key)
			names = append(names, l.name)
		}
	}
	slices.Reverse(names)
	return names
}

// atLevel switches the kernels to the named level (within what KVREF_KERNELS allows) and
// returns the function that switches back.
func atLevel(name string) (restore func()) {
	f, err := levelByName(name)
	if err != nil {
		panic(err)
	}
	before := inEffect
	apply(f & allowed)
	return func() { apply(before) }
}

// forEachLevel runs test as a subtest at every level of testLevels.
func forEachLevel(t *testing.T, test func(t *testing.T)) {
	for _, l := range testLevels() {
		t.Run(l, func(t *testing.T) {
			defer atLevel(l)()
			test(t)
		})
	}
}

// untested lists the registered implementations the tests cannot run here, with why.
func untested() []string {
	var out []string
	for _, k := range registry {
		for _, i := range k.impls {
			switch {
			case !asmBuild:
				out = append(out, i.name+" (no assembly in this build)")
			case !i.supported():
				out = append(out, fmt.Sprintf("%s (this CPU lacks %s)", i.name, i.needs&^cpuFeatures))
			case !i.testable():
				out = append(out, fmt.Sprintf("%s (KVREF_KERNELS=%s)", i.name, levelName(allowed)))
			}
		}
	}
	return out
}

// TestMain runs the tests, then, when every test ran, requires that each fast
// implementation this CPU can run went through a twin test (a kernel registered without
// one fails here), and says which ones the CPU or KVREF_KERNELS left out.
func TestMain(m *testing.M) {
	code := m.Run()
	if code != 0 || !fullRun() {
		os.Exit(code)
	}
	var missed []string
	n := 0
	for _, k := range registry {
		for _, i := range k.impls {
			if i.testable() {
				n++
				if !covered[i] {
					missed = append(missed, i.name)
				}
			}
		}
	}
	if len(missed) > 0 {
		fmt.Printf("FAIL: fast kernels this CPU runs that no twin test exercised: %s\n", strings.Join(missed, "; "))
		os.Exit(1)
	}
	if un := untested(); len(un) > 0 {
		fmt.Printf("kernels: %d fast implementations tested against their portable twins; not tested here: %s\n", n, strings.Join(un, "; "))
	}
	os.Exit(code)
}

// fullRun reports whether the run selected every test (no -run, -skip or -short), so that
// every twin test had its chance to cover the implementations.
func fullRun() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return !testing.Short()
}

// TestKernelsUntestedOnThisCPU skips, naming them, when some registered implementations
// cannot run here: on a CPU without AVX-512 the AVX-512 kernels are not tested, and this
// says so instead of passing in silence.
func TestKernelsUntestedOnThisCPU(t *testing.T) {
	_ = os.Getenv("KVREF_KERNELS") // read at init, before go test could note it for its cache
	if un := untested(); len(un) > 0 {
		t.Skipf("%d fast kernels are not tested on this CPU or build: %s", len(un), strings.Join(un, "; "))
	}
	t.Logf("every registered fast kernel can run here; the twin tests run at levels %s", strings.Join(testLevels(), ", "))
}

// TestRegistryTable: every implementation is registered once, a kernel's implementations
// come fastest first with features that include the next one's (so that restricting the
// features picks the next), and the portable twin is named.
func TestRegistryTable(t *testing.T) {
	seen := map[*impl]bool{}
	for _, k := range registry {
		require.NotEmpty(t, k.portable, k.name)
		for j, i := range k.impls {
			require.False(t, seen[i], "%s is registered twice", i.name)
			seen[i] = true
			require.NotZero(t, i.needs, i.name)
			if j > 0 {
				prev := k.impls[j-1]
				require.Zero(t, i.needs&^prev.needs, "%s: %s needs %s, which the faster %s does not", k.name, i.name, i.needs, prev.name)
			}
		}
	}
}

// TestRestrictAndSetPortable: each level turns on exactly the implementations whose
// features it and the CPU have, the report follows, SetPortable(false) returns to the
// restricted level, and an unknown level is refused.
func TestRestrictAndSetPortable(t *testing.T) {
	startAllowed, startEffect := allowed, inEffect
	defer func() { allowed = startAllowed; apply(startEffect) }()

	for _, name := range Levels() {
		f, err := levelByName(name)
		require.NoError(t, err)
		_, err = Restrict(name)
		require.NoError(t, err)
		for _, k := range registry {
			for _, i := range k.impls {
				require.Equal(t, i.supported() && i.needs&^f == 0, i.on, "level %s: %s", name, i.name)
			}
		}
		SetPortable(true)
		require.Equal(t, "generic", Implementation())
		for _, c := range Implementations() {
			require.Empty(t, c.Impl, c.Kernel)
			require.Len(t, c.Skipped, len(registryKernel(c.Kernel).impls), c.Kernel)
		}
		SetPortable(false)
		require.Equal(t, f, inEffect, "SetPortable(false) returns to the restricted level %s", name)
	}
	_, err := Restrict("sse9")
	require.ErrorContains(t, err, `unknown kernel level "sse9" (want one of generic, avx, avx2, avx512)`)

	prev, err := Restrict("avx512")
	require.NoError(t, err)
	require.Equal(t, "avx512", prev, "the last level of the loop above")
	for _, c := range Implementations() {
		k := registryKernel(c.Kernel)
		if a := k.active(); a != nil {
			require.Equal(t, a.name, c.Impl)
			require.Equal(t, a.needs.short(), c.Needs)
		}
		for _, s := range c.Skipped {
			why := "this CPU lacks"
			if !asmBuild {
				why = "this build has no assembly"
			}
			require.Contains(t, s, why, "with every level allowed, only the CPU or the build stops a kernel")
		}
	}
}

// registryKernel returns the registered kernel of that name.
func registryKernel(name string) *kernel {
	for _, k := range registry {
		if k.name == name {
			return k
		}
	}
	panic("no kernel " + name)
}

// TestEveryLevelSameBits runs a small prefill-like product and a decode-like product at
// every level and requires the same bits as the portable loop.
func TestEveryLevelSameBits(t *testing.T) {
	x, w := randomFloats(8*67, 1), randomFloats(13*67, 2)
	want := make([]float32, 8*13)
	matMulRowsGeneric(want, w, x, 13, 67, 8, 0, 13)
	forEachLevel(t, func(t *testing.T) {
		got := make([]float32, 8*13)
		use(implMatMulAVX)
		MatMulRows(got, w, x, 13, 67, 8, 0, 13)
		for i := range want {
			require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "output %d", i)
		}
	})
}

// TestFeatureNames: the report's short form of the feature sets.
func TestFeatureNames(t *testing.T) {
	require.Equal(t, "AVX", setAVX.short())
	require.Equal(t, "AVX2, F16C", setAVX2.short())
	require.Equal(t, "FMA, AVX-512 F", (setAVX | featAVX512F | featFMA).short())
	require.Equal(t, "AVX-512 F/BW/DQ/VL/VNNI", setVNNI.short())
	require.Equal(t, "AVX, AVX2, F16C, AVX-512F", setAVX512.String())
	require.Equal(t, "none", feature(0).String())
}

// TestReportLines: one line per kernel naming what runs, and one per faster
// implementation left out.
func TestReportLines(t *testing.T) {
	defer atLevel("generic")()
	lines := ReportLines(Implementations())
	n := 0
	for _, k := range registry {
		n += 1 + len(k.impls)
	}
	require.Len(t, lines, n)
	require.True(t, strings.HasPrefix(lines[0], "Dot"), lines[0])
	require.Contains(t, lines[0], "portable Go: dotGeneric")
}
