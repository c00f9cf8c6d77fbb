//go:build !purego

package main

// puregoBuild says the tests run with -tags purego (the portable Go kernels only).
const puregoBuild = false
