//go:build unix

package mcptool

import (
	"os"
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

// terminate asks the server to exit: SIGTERM to its process group, or to
// the process alone, then SIGCONT, so that a stopped server (SIGSTOP,
// Ctrl-Z) acts on it.
func terminate(p *os.Process, group bool) {
	if group {
		_ = syscall.Kill(-p.Pid, syscall.SIGTERM)
		_ = syscall.Kill(-p.Pid, syscall.SIGCONT)
		return
	}
	_ = p.Signal(syscall.SIGTERM)
	_ = p.Signal(syscall.SIGCONT)
}

// kill kills the server: SIGKILL to its process group, or to the process
// alone.
func kill(p *os.Process, group bool) {
	if group {
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
		return
	}
	_ = p.Kill()
}

// killGroup kills every process left in the process group pgid.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}
