//go:build race

package replies_test

// raceEnabled: the race detector makes sync.Pool drop items on purpose, so Read
// allocates under it.
const raceEnabled = true
