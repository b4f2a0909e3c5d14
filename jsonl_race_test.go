//go:build race

package agentrt_test

// raceEnabled is true when the tests run with -race, and every step,
// spawned test binaries included, is several times slower.
const raceEnabled = true
