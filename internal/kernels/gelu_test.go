package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGELUTanh: the tanh approximation against PyTorch's published values of
// gelu(x, approximate="tanh") and against its sigmoid form x·σ(2·√(2/π)·(x + 0.044715x³)),
// an independent way to write the same function.
func TestGELUTanh(t *testing.T) {
	// torch.nn.functional.gelu(torch.tensor([...], dtype=torch.float64), approximate="tanh")
	for x, want := range map[float64]float64{1: 0.8411919906082768, -1: -0.15880800939172324, 2: 1.954597694087775, -3: -0.0036373920817729943, 0: 0} {
		require.InDelta(t, want, GELUTanh(x), 1e-15, "gelu_tanh(%g)", x)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		x := rng.NormFloat64() * 4
		z := 2 * math.Sqrt(2/math.Pi) * (x + 0.044715*x*x*x)
		want := x / (1 + math.Exp(-z))
		require.InDelta(t, want, GELUTanh(x), 1e-14*math.Max(1, math.Abs(x)), "gelu_tanh(%g)", x)
	}
}

// TestGELUTanhGLU: every element is the float32 rounding of the float64 GELU times up, in
// one float32 multiply; up longer than gate is fine, its tail untouched.
func TestGELUTanhGLU(t *testing.T) {
	gate := []float32{1, -1, 2, -3, 0, 0.5}
	up := []float32{1, 2, -0.5, 4, 7, 3, 99}
	GELUTanhGLU(gate, up)
	want := []float64{0.8411919906082768, 2 * -0.15880800939172324, -0.5 * 1.954597694087775, 4 * -0.0036373920817729943, 0, 3 * 0.34571400982514394}
	for i, w := range want {
		require.InDelta(t, w, float64(gate[i]), 2e-7*math.Max(1, math.Abs(w)), "element %d", i)
	}
	require.Equal(t, float32(99), up[6])
}

// TestSoftCap: values far below the cap pass nearly unchanged, every value stays inside
// (-cap, cap), the function is odd and monotonic, and cap·tanh(1) comes out at the cap itself.
func TestSoftCap(t *testing.T) {
	x := []float32{50, -50, 0.05, -0.05, 1e6, -1e6, 0, 30, 29.9, 120}
	SoftCap(x, 50)
	require.InDelta(t, 38.079707797788245, float64(x[0]), 4e-6)
	require.Equal(t, -x[0], x[1], "odd")
	require.InEpsilon(t, 0.05, float64(x[2]), 1e-6, "nearly the identity far below the cap")
	require.Equal(t, -x[2], x[3])
	require.Equal(t, float32(50), x[4], "tanh rounds to 1 in float32 far above the cap")
	require.Equal(t, float32(-50), x[5])
	require.Zero(t, x[6])
	require.Greater(t, x[7], x[8], "monotonic")
	require.Less(t, x[9], float32(50))
	y := []float32{60}
	SoftCap(y, 30)
	require.InDelta(t, 28.920827402274508, float64(y[0]), 2e-6)
}
