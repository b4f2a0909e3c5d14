//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package agentrt

import (
	"errors"
	"os"
	"strconv"
	"syscall"
)

// lockFile takes an exclusive, non-blocking flock(2) on the file name in
// root, creating it. It returns errLockHeld if another open file holds it
// (another process, or another JSONLStore on the same directory).
//
// The lock file is removed on unlock, so a locker may open a file that the
// holder removes before the locker gets the lock; it then checks that the
// file it locked is still the one under that name, and tries again if not.
func lockFile(root *os.Root, name string) (*os.File, error) {
	for range 100 {
		f, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, errLockHeld
			}
			return nil, err
		}
		locked, err1 := f.Stat()
		named, err2 := root.Stat(name)
		if err1 == nil && err2 == nil && os.SameFile(locked, named) {
			// For people looking at the directory: who holds it.
			if f.Truncate(0) == nil {
				_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			}
			return f, nil
		}
		f.Close() // removed or replaced under us: try again
	}
	return nil, errLockHeld
}

// unlockFile removes the lock file while still holding its lock, then
// releases it by closing it.
func unlockFile(root *os.Root, name string, f *os.File) {
	_ = root.Remove(name)
	_ = f.Close()
}

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return ferr
}
