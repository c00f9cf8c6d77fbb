package benchmark

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// procStat is where Linux keeps the machine's CPU time counters.
const procStat = "/proc/stat"

// cpuTimes is one reading of the first line of /proc/stat: the time all CPUs spent in
// every state, and of that the time stolen by the hypervisor (given to other virtual
// machines while this one had work to run), in clock ticks.
type cpuTimes struct {
	total, steal uint64
}

// readCPUTimes reads the aggregate "cpu" line of a /proc/stat-style file: user, nice,
// system, idle, iowait, irq, softirq, steal (guest time is already inside user).
func readCPUTimes(path string) (cpuTimes, error) {
	f, err := os.Open(path)
	if err != nil {
		return cpuTimes{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "cpu" {
			continue
		}
		if len(fields) < 9 {
			return cpuTimes{}, fmt.Errorf("%s: the cpu line has %d counters, want at least 8 (user ... steal)", path, len(fields)-1)
		}
		var t cpuTimes
		for i, s := range fields[1:9] {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return cpuTimes{}, fmt.Errorf("%s: counter %d of the cpu line: %w", path, i+1, err)
			}
			t.total += v
			if i == 7 {
				t.steal = v
			}
		}
		return t, nil
	}
	if err := sc.Err(); err != nil {
		return cpuTimes{}, err
	}
	return cpuTimes{}, fmt.Errorf("%s has no cpu line", path)
}

// StealMeter measures how much of the machine's CPU time the hypervisor took away during a
// measurement. On a virtual machine whose host is oversubscribed, a thread that has work
// loses the CPU to other machines: wall times grow by that share, and figures taken at
// different moments are not comparable (ratios taken within one interleaved run still are).
type StealMeter struct {
	path  string
	start cpuTimes
	err   error
}

// StartSteal starts a StealMeter now.
func StartSteal() *StealMeter { return startSteal(procStat) }

func startSteal(path string) *StealMeter {
	t, err := readCPUTimes(path)
	return &StealMeter{path: path, start: t, err: err}
}

// Fraction returns the share of the CPU time since the start that was stolen, and false
// when the machine does not say (no /proc/stat, or no time has passed).
func (m *StealMeter) Fraction() (float64, bool) {
	if m.err != nil {
		return 0, false
	}
	now, err := readCPUTimes(m.path)
	if err != nil || now.total <= m.start.total || now.steal < m.start.steal {
		return 0, false
	}
	return float64(now.steal-m.start.steal) / float64(now.total-m.start.total), true
}

// JSON is the meter's JSON form: the stolen share of CPU time (Fraction), or nil (null)
// when the machine does not say.
func (m *StealMeter) JSON() *float64 {
	f, ok := m.Fraction()
	if !ok {
		return nil
	}
	return &f
}

// WriteSteal writes the stolen share of CPU time during the measurement, with what it
// means for the figures above it; nothing when the machine does not say.
func WriteSteal(w io.Writer, m *StealMeter) {
	f, ok := m.Fraction()
	if !ok {
		return
	}
	fmt.Fprintf(w, "\nhost steal: %.1f%% of the CPU time during the measurement went to other virtual machines on this host", 100*f)
	if f >= 0.02 {
		fmt.Fprint(w, " (threads waited about that share of the time for a CPU, so the times above are slowed by other machines' work; compare only figures from one interleaved run)")
	}
	fmt.Fprintln(w)
}
