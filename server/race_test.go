//go:build race

package server

// raceDetector is set when the tests run under -race.
const raceDetector = true
