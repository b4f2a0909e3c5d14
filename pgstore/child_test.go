package pgstore

func runChild() bool { return false }
