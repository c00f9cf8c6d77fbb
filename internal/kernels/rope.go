package kernels

import "math"

// RoPEStyle says which elements of a head are rotated together.
type RoPEStyle uint8

const (
	// RoPEAdjacent rotates pairs (x[2i], x[2i+1]): GGUF "llama" tensors and llama2.c.
	RoPEAdjacent RoPEStyle = iota
	// RoPEHalves rotates pairs (x[i], x[i+d/2]): Hugging Face checkpoints and GGUF NeoX-style
	// architectures such as qwen2.
	RoPEHalves
)

// RoPE holds the rotary position embedding of one model: the inverse frequency of every
// rotated pair, computed once in float64.
type RoPE struct {
	Style   RoPEStyle
	Dims    int       // number of rotated dimensions per head (≤ head_dim, even)
	InvFreq []float64 // len Dims/2: base^(-2i/Dims), possibly rescaled
}

// NewRoPE returns the rotary embedding with the given rotated dimensions and base.
func NewRoPE(style RoPEStyle, dims int, base float64) *RoPE {
	inv := make([]float64, dims/2)
	for i := range inv {
		inv[i] = math.Pow(base, -float64(2*i)/float64(dims))
	}
	return &RoPE{Style: style, Dims: dims, InvFreq: inv}
}

// Apply rotates every head of x (heads consecutive vectors of headDim values) to position pos.
func (r *RoPE) Apply(x []float32, heads, headDim, pos int) {
	r.ApplyQK(x, heads, nil, 0, headDim, pos)
}

// ApplyQK rotates the query heads q and the key heads k of one token to position pos, each
// angle's sine and cosine computed once for both: the same values as Apply on each.
func (r *RoPE) ApplyQK(q []float32, qHeads int, k []float32, kHeads, headDim, pos int) {
	half := r.Dims / 2
	for i := 0; i < half; i++ {
		theta := float64(pos) * r.InvFreq[i]
		sin64, cos64 := math.Sincos(theta)
		c, s := float32(cos64), float32(sin64)
		a, b := 2*i, 2*i+1
		if r.Style == RoPEHalves {
			a, b = i, i+half
		}
		rotatePairs(q, qHeads, headDim, a, b, c, s)
		rotatePairs(k, kHeads, headDim, a, b, c, s)
	}
}

// rotatePairs rotates the pair (a, b) of every head of x by the angle whose cosine and sine
// are c and s.
func rotatePairs(x []float32, heads, headDim, a, b int, c, s float32) {
	for h := 0; h < heads; h++ {
		v := x[h*headDim : (h+1)*headDim]
		x0, x1 := v[a], v[b]
		v[a] = float32(x0*c) - float32(x1*s)
		v[b] = float32(x0*s) + float32(x1*c)
	}
}
