//go:build unix

package mcptool

import (
	"os/exec"
	"syscall"
)

// startInGroup arranges for cmd to start in a process group of its own,
// unless the caller set SysProcAttr, and reports whether it did.
func startInGroup(cmd *exec.Cmd) bool {
	if cmd.SysProcAttr != nil {
		return false
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return true
}

// killGroup kills every process left in the process group pgid.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}
