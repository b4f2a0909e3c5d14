//go:build windows

package agentrt

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockFile takes an exclusive, non-blocking LockFileEx lock on the file
// name in root, creating it. It returns errLockHeld if another handle holds
// it. Lock files are left in place on Windows (an open file cannot be
// removed there), so there is no race with removal.
func lockFile(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			return nil, errLockHeld
		}
		return nil, err
	}
	return f, nil
}

// unlockFile releases the lock by closing the file.
func unlockFile(_ *os.Root, _ string, f *os.File) { _ = f.Close() }
