//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

// asmBuild says that this build has the assembly kernels.
const asmBuild = true

// cpuFeatures is what this CPU (and its operating system, which must save the YMM and
// ZMM registers: cpu.X86.HasAVX and HasAVX512F include that) offers the kernels.
var cpuFeatures = detectFeatures()

func detectFeatures() feature {
	var f feature
	for _, c := range []struct {
		has bool
		f   feature
	}{
		{cpu.X86.HasAVX, featAVX}, {cpu.X86.HasAVX2, featAVX2}, {cpu.X86.HasFMA, featFMA},
		{cpu.X86.HasF16C, featF16C}, {cpu.X86.HasAVX512F, featAVX512F},
		{cpu.X86.HasAVX512BW, featAVX512BW}, {cpu.X86.HasAVX512DQ, featAVX512DQ},
		{cpu.X86.HasAVX512VL, featAVX512VL}, {cpu.X86.HasAVX512VNNI, featAVX512VNNI},
	} {
		if c.has {
			f |= c.f
		}
	}
	return f
}
