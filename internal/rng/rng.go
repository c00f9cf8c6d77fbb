// Package rng is SplitMix64, the small pseudo-random generator kvref uses wherever a result
// must be reproducible forever (synthetic weights, sampling seeds): its output depends only
// on the seed, never on the Go version.
package rng

// SplitMix64 is a 64-bit pseudo-random generator. The zero value is seeded with 0.
type SplitMix64 struct{ state uint64 }

// New returns a generator seeded with seed.
func New(seed uint64) *SplitMix64 { return &SplitMix64{state: seed} }

// Uint64 returns the next 64 random bits.
func (r *SplitMix64) Uint64() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Float64 returns a number in [0, 1) with 53 random bits.
func (r *SplitMix64) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Symmetric returns a float32 in [-1, 1) with 24 random bits.
func (r *SplitMix64) Symmetric() float32 {
	return float32(int64(r.Uint64()>>40)-(1<<23)) / (1 << 23)
}
