package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// normalise removes what depends on the wall clock and the machine from
// the output of a command: durations, times of day, dates and the
// directory of the sessions.
func normalise(out, dir string) string {
	out = strings.ReplaceAll(out, dir+string(filepath.Separator), "SESSIONS/")
	out = dateRE.ReplaceAllString(out, "YYYY-MM-DD hh:mm:ss")
	out = timeRE.ReplaceAllString(out, "hh:mm:ss")
	out = durRE.ReplaceAllString(out, "${1}<d>")
	out = spaceDurRE.ReplaceAllString(out, " <d>")
	return out
}

var (
	dateRE = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`)
	timeRE = regexp.MustCompile(`\b\d\d:\d\d:\d\d\b`)
	durRE  = regexp.MustCompile(`(^|[^\w. ])(\d+m\d\ds|\d+\.\d+s|\d+(µs|ms|s))\b`)
	gapRE  = regexp.MustCompile(`  +`)
	// A duration padded by pdur, with the spaces before it.
	spaceDurRE = regexp.MustCompile(` +(\d+m\d\ds|\d+\.\d+s|\d+(µs|ms|s))\b`)
)

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	require.Equal(t, string(want), got, "golden file %s (go test -update rewrites it)", path)
}

// TestGoldenShowLs renders every recorded scenario with show (terminal
// timeline, no colour, 120 columns) and the directory with ls, and
// compares them with the golden files; each output starts with the
// failing layer, which the test checks too.
func TestGoldenShowLs(t *testing.T) {
	t.Parallel()
	dir, _ := recordAll(t)
	ctx := context.Background()
	for _, sc := range scenarios {
		var out, errb strings.Builder
		code := run(ctx, []string{"show", "-color", "never", "-width", "120", filepath.Join(dir, sc.id)}, &out, &errb)
		require.Equal(t, 0, code, errb.String())
		got := normalise(out.String(), dir)
		head, _, _ := strings.Cut(got, "\n")
		switch sc.layer {
		case "":
			require.True(t, strings.HasPrefix(head, "COMPLETED: "), "%s: %s", sc.id, head)
		default:
			require.Contains(t, head, "at the "+sc.layer+" layer", sc.id)
		}
		checkGolden(t, sc.id+".show.txt", got)
	}
	var out, errb strings.Builder
	require.Equal(t, 0, run(ctx, []string{"ls", "-price-in", "3", "-price-out", "15", dir}, &out, &errb), errb.String())
	// The widths of its columns depend on the durations: one gap each.
	got := gapRE.ReplaceAllString(normalise(out.String(), dir), "  ")
	for _, sc := range scenarios {
		want := sc.layer
		if want == "" {
			want = "-"
		}
		require.Regexp(t, `(?m)^`+regexp.QuoteMeta(sc.id)+` .*\s`+regexp.QuoteMeta(want)+`\s`, got)
	}
	checkGolden(t, "ls.txt", got)
}

// TestShowFlags checks -turn, -full and -json on one session.
func TestShowFlags(t *testing.T) {
	t.Parallel()
	dir, _ := recordAll(t)
	ctx := context.Background()
	var out, errb strings.Builder
	require.Equal(t, 0, run(ctx, []string{"show", "-color", "never", "-turn", "2", "-full", filepath.Join(dir, "denial.jsonl")}, &out, &errb), errb.String())
	require.NotContains(t, out.String(), "turn 1 ")
	require.Contains(t, out.String(), "turn 2 ")
	out.Reset()
	require.Equal(t, 0, run(ctx, []string{"show", "-color", "always", filepath.Join(dir, "denial")}, &out, &errb), errb.String())
	require.Contains(t, out.String(), "\x1b[")
	out.Reset()
	require.Equal(t, 0, run(ctx, []string{"show", filepath.Join(dir, "denial")}, &out, &errb), errb.String())
	require.NotContains(t, out.String(), "\x1b[", "no colour when not on a terminal")
	out.Reset()
	require.Equal(t, 0, run(ctx, []string{"show", "-json", filepath.Join(dir, "denial")}, &out, &errb), errb.String())
	require.Contains(t, out.String(), `"outcome": "denied"`)
	require.Equal(t, 2, run(ctx, []string{"show", filepath.Join(dir, "nope")}, &out, &errb))
}
