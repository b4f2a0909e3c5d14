// Package pgtest starts a real PostgreSQL server for tests: initdb in a
// temporary directory, the server listening on 127.0.0.1 on a free port,
// stopped at the end. It runs the server as a non-root user when the test
// runs as root (the user "postgres" of Debian's package, else "nobody"),
// since PostgreSQL refuses to run as root.
//
// The binaries are found in $AGENTRT_PG_BIN, else in the newest
// /usr/lib/postgresql/<version>/bin (Debian's layout), else on PATH.
//
// Use one server per test binary:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestX(t *testing.T) {
//		url := pgtest.NewDatabase(t) // a new, empty database
//		...
//	}
//
// When PostgreSQL is not installed, NewDatabase skips the test, or fails
// it when the environment variable CI is set (CI must not skip silently).
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"

	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrNotInstalled is returned by [Start] when no PostgreSQL binaries are found.
var ErrNotInstalled = errors.New("pgtest: PostgreSQL is not installed (apt-get install postgresql, or set AGENTRT_PG_BIN)")

// Server is a PostgreSQL server started by [Start].
type Server struct {
	bin  string // directory of initdb and postgres
	dir  string // data directory
	port int
	set  []string    // extra settings, "name=value"
	cred *credential // nil: run as the current user
	log  *os.File

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd exits
}

// BinDir returns the directory holding initdb and postgres, or
// ErrNotInstalled.
func BinDir() (string, error) {
	if d := os.Getenv("AGENTRT_PG_BIN"); d != "" {
		return d, nil
	}
	if dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin"); len(dirs) > 0 {
		sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
		for _, d := range dirs {
			if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
				return d, nil
			}
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", ErrNotInstalled
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start runs initdb in a new temporary directory and starts the server on
// a free loopback port, with the given settings ("name=value", as
// postgres -c takes them; e.g. "wal_writer_delay=10s"). Stop it with
// [Server.Stop].
func Start(ctx context.Context, settings ...string) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	cred, err := serverUser()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "agentrt-pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, cred: cred, set: settings}
	if err := s.chown(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync")
	s.setUser(initdb)
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	if s.port, err = freePort(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if s.log, err = os.Create(filepath.Join(dir, "server.log")); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.start(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Start starts a server that was stopped, on the same port and data.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	running := s.cmd != nil
	s.mu.Unlock()
	if running {
		return errors.New("pgtest: the server is running")
	}
	return s.start(ctx)
}

func (s *Server) start(ctx context.Context) error {
	args := []string{
		"-D", filepath.Join(s.dir, "data"),
		"-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=" + s.dir,
		"-c", "max_connections=200",
		"-c", "shared_buffers=32MB",
	}
	for _, kv := range s.set {
		args = append(args, "-c", kv)
	}
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	s.setUser(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	// Wait until it accepts connections (or exits).
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			c.Close(ctx)
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("pgtest: postgres exited: %v\n%s", cmd.ProcessState, s.Log())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres did not answer within a minute: %v\n%s", err, s.Log())
		}
	}
}

// signal stops the running server with sig and waits for it to exit.
func (s *Server) signal(sig os.Signal) error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd, s.done = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Signal(sig); err != nil {
		select {
		case <-done:
			return nil
		default:
			return err
		}
	}
	select {
	case <-done:
		return nil
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		return errors.New("pgtest: postgres did not stop within a minute; killed")
	}
}

// Log returns the server's log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	return string(b)
}

// Port returns the port the server listens on.
func (s *Server) Port() int { return s.port }

// URL returns the connection URL of database db.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

var dbSeq atomic.Int64

// CreateDatabase creates a new, empty database and returns its URL.
func (s *Server) CreateDatabase(ctx context.Context) (string, error) {
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		return "", err
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	return s.URL(name), nil
}

// Kill sends SIGKILL to the server's postmaster, as a crash would.
func (s *Server) Kill() error { return s.signal(os.Kill) }

// StopImmediate stops the server as pg_ctl stop -m immediate does
// (SIGQUIT): every process exits at once, without flushing the
// write-ahead log, as in a power loss of the server's processes.
func (s *Server) StopImmediate() error { return s.signal(syscall.SIGQUIT) }

// Stop shuts the server down (fast shutdown) and waits for it.
func (s *Server) Stop() error { return s.signal(os.Interrupt) }

// Restart stops the server and starts it again on the same port and data.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.start(ctx)
}

// Close stops the server and removes its directory.
func (s *Server) Close() error {
	err := s.Stop()
	if s.log != nil {
		s.log.Close()
	}
	if rerr := os.RemoveAll(s.dir); err == nil {
		err = rerr
	}
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// Shared returns the server of this test binary, starting it on first use.
// [Main] stops it at the end.
func Shared() (*Server, error) {
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.srv, shared.err = Start(ctx)
	})
	return shared.srv, shared.err
}

// Main runs the tests and then stops the shared server, if it was started.
// Use it as TestMain: os.Exit(pgtest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared.srv != nil {
		if err := shared.srv.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
		}
	}
	return code
}

// Require returns the shared server, or skips t when PostgreSQL is not
// installed; when the environment variable CI is set, it fails t instead.
// Any other failure to start fails t.
func Require(t testing.TB) *Server {
	t.Helper()
	srv, err := Shared()
	if errors.Is(err, ErrNotInstalled) {
		if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
			t.Fatalf("%v (CI is set: tests that need PostgreSQL fail instead of skipping)", err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// NewDatabase returns the URL of a new, empty database on the shared
// server; see [Require] for when PostgreSQL is missing.
func NewDatabase(t testing.TB) string {
	t.Helper()
	srv := Require(t)
	url, err := srv.CreateDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

// Exited reports whether the server process has exited (for tests of a
// server that went away).
func (s *Server) Exited() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd == nil
}
