//go:build !linux

package pgtest

import (
	"errors"
	"os/exec"
)

type credential struct{}

func serverUser() (*credential, error) {
	return nil, errors.Join(ErrNotInstalled, errors.New("pgtest: only Linux is supported"))
}

func (s *Server) setUser(*exec.Cmd) {}

func (s *Server) chown(string) error { return nil }
