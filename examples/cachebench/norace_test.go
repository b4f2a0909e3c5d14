package cachebench

// raceEnabled is set when the test runs under the race detector.
var raceEnabled bool
