//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || windows)

package agentrt

import "os"

// lockFile does nothing on platforms without a file lock the store knows.
func lockFile(*os.Root, string) (*os.File, error) { return nil, nil }

// unlockFile does nothing.
func unlockFile(*os.Root, string, *os.File) {}
