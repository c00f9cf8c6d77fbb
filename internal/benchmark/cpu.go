package benchmark

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"
)

// CPUName describes this machine's processor for a benchmark report: its model name (from
// /proc/cpuinfo where there is one), the x86 family and model, the vector features that
// decide which kernels run on both engines, and the number of logical CPUs, for example
// "AMD EPYC (family 25 model 17; AVX2 FMA F16C AVX-512F VNNI BF16), 2 CPUs".
func CPUName() string {
	name, family, mdl := cpuInfo("/proc/cpuinfo")
	if name == "" {
		name = runtime.GOARCH
	}
	var id []string
	if family != "" {
		id = append(id, "family "+family+" model "+mdl)
	}
	if runtime.GOARCH == "amd64" {
		var fs []string
		for _, f := range []struct {
			has  bool
			name string
		}{
			{cpu.X86.HasAVX2, "AVX2"}, {cpu.X86.HasFMA, "FMA"}, {cpu.X86.HasF16C, "F16C"},
			{cpu.X86.HasAVX512F, "AVX-512F"}, {cpu.X86.HasAVX512VNNI, "VNNI"}, {cpu.X86.HasAVX512BF16, "BF16"},
		} {
			if f.has {
				fs = append(fs, f.name)
			}
		}
		if len(fs) == 0 {
			fs = []string{"no AVX2"}
		}
		id = append(id, strings.Join(fs, " "))
	}
	s := name
	if len(id) > 0 {
		s += " (" + strings.Join(id, "; ") + ")"
	}
	return fmt.Sprintf("%s, %d CPUs", s, runtime.NumCPU())
}

// cpuInfo reads the first processor's model name, family and model from a
// /proc/cpuinfo-style file; empty strings when it cannot.
func cpuInfo(path string) (name, family, model string) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			if name != "" { // the end of the first processor's block
				break
			}
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name":
			name = v
		case "cpu family":
			family = v
		case "model":
			model = v
		}
	}
	return name, family, model
}
