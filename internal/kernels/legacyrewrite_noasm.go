//go:build !amd64 || purego

package kernels

func q4_0AsQ8_0(dst, src []byte) { q4_0AsQ8_0Generic(dst, src) }

func q5_0AsQ8_0(dst, src []byte) { q5_0AsQ8_0Generic(dst, src) }
