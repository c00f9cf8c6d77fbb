package plan

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

// sizeUnits maps a size suffix (lower case) to its multiplier. The convention is that of
// numfmt --from=auto and Kubernetes quantities: a bare or B-suffixed SI letter is a power of
// 1000 (G = GB = 10^9), an "i" makes it a power of 1024 (Gi = GiB = 2^30). Case is ignored,
// and b means bytes, never bits.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1e3, "kb": 1e3, "ki": 1 << 10, "kib": 1 << 10,
	"m": 1e6, "mb": 1e6, "mi": 1 << 20, "mib": 1 << 20,
	"g": 1e9, "gb": 1e9, "gi": 1 << 30, "gib": 1 << 30,
	"t": 1e12, "tb": 1e12, "ti": 1 << 40, "tib": 1 << 40,
	"p": 1e15, "pb": 1e15, "pi": 1 << 50, "pib": 1 << 50,
}

// SizeHelp explains ParseSize's units in flag help.
const SizeHelp = "sizes: 80GB = 80G = 80·10^9 bytes, 80GiB = 80Gi = 80·2^30 bytes (as numfmt and Kubernetes read them); " +
	"also k, M, T, P and Ki, Mi, Ti, Pi; fractions (1.5TB); a plain number is bytes"

// ParseSize reads a byte count such as "80GB", "80GiB", "14G", "512MB", "1.5TB", "1 TiB" or
// "4096". A fractional result is rounded down to a whole byte.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if num == "" || strings.Count(num, ".") > 1 || num == "." || !ok {
		return 0, fmt.Errorf("size %q is not a number of bytes with an optional unit (%s)", s, SizeHelp)
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, fmt.Errorf("size %q: %q is not a number", s, num)
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if !n.IsInt64() {
		return 0, fmt.Errorf("size %q is too large (the limit is %d bytes)", s, int64(math.MaxInt64))
	}
	return n.Int64(), nil
}

// FormatSize prints a byte count in the largest binary unit that keeps it at least 1, with
// two decimals ("128.00 KiB", "512.00 MiB", "74.51 GiB"); below 1 KiB it prints whole
// bytes ("34 B").
func FormatSize(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	if n < 1024 && n > -1024 {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	u := -1
	for math.Abs(v) >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return fmt.Sprintf("%.2f %s", v, units[u])
}
