package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

type credential = syscall.Credential

// serverUser returns the user to run PostgreSQL as: nil (the current user)
// unless the current user is root, then "postgres", else "nobody".
func serverUser() (*credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		return &credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, fmt.Errorf("pgtest: running as root and found neither user postgres nor nobody to run PostgreSQL as")
}

func (s *Server) setUser(cmd *exec.Cmd) {
	// The server dies with the test binary, whatever happens to it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Pdeathsig: syscall.SIGKILL}
}

func (s *Server) chown(dir string) error {
	if s.cred == nil {
		return nil
	}
	return os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid))
}
