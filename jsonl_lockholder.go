package agentrt

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// lockHolder says who holds the lock file of session id, from the process
// id its holder writes in it: another JSONLStore on the same directory in
// this process, or another process. Until the holder has written its id
// (or where the file cannot be read while locked) it says either.
func (s *JSONLStore) lockHolder(id string) string {
	b, err := s.root.ReadFile(id + ".lock")
	pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
	switch {
	case err != nil || perr != nil || pid <= 0:
		return "another process or another JSONLStore on the same directory"
	case pid == os.Getpid():
		return "another JSONLStore on the same directory, in this process"
	default:
		return fmt.Sprintf("another process (pid %d)", pid)
	}
}
