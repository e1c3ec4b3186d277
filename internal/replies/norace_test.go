//go:build !race

package replies_test

// raceEnabled: see race_test.go.
const raceEnabled = false
