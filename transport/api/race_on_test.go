//go:build race

package api

// raceDetector is true when the tests run under the race detector.
const raceDetector = true
