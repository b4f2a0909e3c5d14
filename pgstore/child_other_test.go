//go:build !linux

package pgstore

func runChild() bool { return false }
