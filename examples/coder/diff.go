package main

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// maxDiffCells bounds the work of the line diff: when the changed middle
// of two files is larger, it is shown as removed whole and added whole.
const maxDiffCells = 4 << 20

// diffOp is one line of an edit script: ' ' kept, '-' removed, '+' added.
type diffOp struct {
	kind byte
	line string // with its "\n", if it has one
}

// unifiedDiff returns the change from before to after as a unified diff of
// name, as `diff -u` prints it, or "" when they are equal. created marks a
// file that does not exist yet (shown as coming from /dev/null).
func unifiedDiff(name, before, after string, created bool) string {
	if before == after && !created {
		return ""
	}
	ops := diffLines(splitLines(before), splitLines(after))
	var sb strings.Builder
	name = oneLine(name) // a newline in it must not make a line of the diff
	if created {
		fmt.Fprintf(&sb, "--- /dev/null\n+++ b/%s\n", name)
	} else {
		fmt.Fprintf(&sb, "--- a/%s\n+++ b/%s\n", name, name)
	}
	// aPos[i] and bPos[i] count the lines of each side before ops[i].
	aPos := make([]int, len(ops)+1)
	bPos := make([]int, len(ops)+1)
	for i, op := range ops {
		aPos[i+1], bPos[i+1] = aPos[i], bPos[i]
		if op.kind != '+' {
			aPos[i+1]++
		}
		if op.kind != '-' {
			bPos[i+1]++
		}
	}
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk starts diffContext lines before this change and takes
		// every change less than 2*diffContext kept lines after the last.
		start := max(0, i-diffContext)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j + 1
			} else if j-end >= 2*diffContext {
				break
			}
		}
		end = min(len(ops), end+diffContext)
		aCount, bCount := aPos[end]-aPos[start], bPos[end]-bPos[start]
		fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(aPos[start], aCount), hunkRange(bPos[start], bCount))
		for _, op := range ops[start:end] {
			sb.WriteByte(op.kind)
			sb.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return sb.String()
}

// hunkRange formats one side of a hunk header: the first line (counting
// from 1, or the line before an empty range) and the count, omitted when 1.
func hunkRange(before, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", before)
	case 1:
		return fmt.Sprintf("%d", before+1)
	}
	return fmt.Sprintf("%d,%d", before+1, count)
}

// splitLines splits s after each "\n"; a last line without one is kept.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines returns an edit script from a to b with as few changed lines as
// possible (a longest common subsequence), removals before additions.
func diffLines(a, b []string) []diffOp {
	var ops []diffOp
	// Common prefix and suffix cost nothing and keep the table small.
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	for _, l := range a[:p] {
		ops = append(ops, diffOp{' ', l})
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	if len(ma)*len(mb) > maxDiffCells {
		for _, l := range ma {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, diffOp{'+', l})
		}
	} else {
		ops = append(ops, lcsDiff(ma, mb)...)
	}
	for _, l := range a[len(a)-s:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}

func lcsDiff(a, b []string) []diffOp {
	n, m := len(a), len(b)
	// l[i*(m+1)+j] is the length of the LCS of a[i:] and b[j:].
	l := make([]int32, (n+1)*(m+1))
	at := func(i, j int) int32 { return l[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i*(m+1)+j] = at(i+1, j+1) + 1
			} else {
				l[i*(m+1)+j] = max(at(i+1, j), at(i, j+1))
			}
		}
	}
	ops := make([]diffOp, 0, n+m)
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{' ', a[i]})
			i++
			j++
		case j == m || i < n && at(i+1, j) >= at(i, j+1):
			ops = append(ops, diffOp{'-', a[i]})
			i++
		default:
			ops = append(ops, diffOp{'+', b[j]})
			j++
		}
	}
	return ops
}
