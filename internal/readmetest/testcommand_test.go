package readmetest

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestREADMETestCommand checks that the README's test command is the one
// scripts/test.sh runs (and CI, through it): the same package patterns, so
// that neither misses a module the other tests.
func TestREADMETestCommand(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	setup := regexp.MustCompile("(?s)## Set-up: two commands\n\n```sh\n(.*?)```").FindSubmatch(readme)
	if setup == nil {
		t.Fatal("README.md has no set-up block")
	}
	var readmeCmd string
	for _, line := range strings.Split(string(setup[1]), "\n") {
		if strings.HasPrefix(line, "go test ") {
			readmeCmd = strings.TrimSpace(strings.SplitN(line, "#", 2)[0])
		}
	}
	if readmeCmd == "" {
		t.Fatal("the README's set-up block has no go test command")
	}
	cmd := exec.Command("bash", "scripts/test.sh", "--patterns")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/test.sh --patterns: %v", err)
	}
	if want := "go test " + strings.TrimSpace(string(out)); readmeCmd != want {
		t.Errorf("README test command\n  %s\nscripts/test.sh runs\n  %s", readmeCmd, want)
	}
}
