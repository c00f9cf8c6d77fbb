//go:build !amd64 || purego

package kernels

func scale(x []float32, s float32) { scaleGeneric(x, s) }

func maxOf(x []float32) float32 { return maxGeneric(x) }
