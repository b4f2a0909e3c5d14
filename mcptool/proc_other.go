//go:build !unix

package mcptool

import (
	"os"
	"os/exec"
)

// startInGroup does nothing on systems without Unix process groups.
func startInGroup(*exec.Cmd) bool { return false }

// terminate kills the server: there is no SIGTERM to send.
func terminate(p *os.Process, _ bool) { _ = p.Kill() }

// kill kills the server.
func kill(p *os.Process, _ bool) { _ = p.Kill() }

func killGroup(int) {}
