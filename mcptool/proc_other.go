//go:build !unix

package mcptool

import "os/exec"

// startInGroup does nothing on systems without Unix process groups.
func startInGroup(*exec.Cmd) bool { return false }

func killGroup(int) {}
