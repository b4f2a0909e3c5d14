//go:build race

package cachebench

func init() { raceEnabled = true }
