//go:build !amd64 || purego

package kernels

// asmBuild says that this build has no assembly kernels: -tags purego, or an architecture
// other than amd64. Every kernel is then its portable Go twin (FAMILY_generic.go), called
// from dispatch_noasm.go.
const asmBuild = false

// cpuFeatures is empty: nothing but the portable Go runs in this build.
const cpuFeatures feature = 0

// zmmWidthDetail has nothing to say: no assembly runs in this build.
func zmmWidthDetail() string { return "" }

// zmmFullWidth is false: no assembly, so no ZMM registers, run in this build.
const zmmFullWidth = false

// kTileDetail has nothing to say: no assembly runs in this build.
func kTileDetail() string { return "" }

// kRowsDetail has nothing to say: no assembly runs in this build.
func kRowsDetail() string { return "" }
