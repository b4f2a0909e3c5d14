package agentrt

import (
	"runtime/debug"
)

// How the runtime calls user code (planners, tools, decoders, checkers,
// hooks, compressors). Each call goes through protect, on the goroutine
// that needs the result: a panic is recovered there and becomes the
// callback's failure (an is_error result, a denial, a *PanicError). A
// runtime.Goexit (t.FailNow in a test) is Go's: it goes on ending the
// goroutine, and Run's deferred cleanup leaves the session valid. Only a
// goroutine the runtime started itself (a call of a parallel group, a
// durable step) contains a Goexit too, with guard.

// goexitValue is the PanicError.Value of a callback that called
// runtime.Goexit on a goroutine the runtime started.
const goexitValue = "runtime.Goexit called"

// protect calls f, a user callback, and returns its panic, recovered, or
// nil. A runtime.Goexit goes on ending the goroutine. So does a panic while
// *left is set: the caller's loop body panicked in an event yielded from
// inside f, which is not f's failure. left is nil off the run's goroutine.
func protect(left *bool, f func()) (perr *PanicError) {
	defer func() {
		if left != nil && *left {
			return // not recovered: the panic goes on with its own stack
		}
		if v := recover(); v != nil {
			perr = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	f()
	return nil
}

// guard runs f on the current goroutine, which must be one the runtime
// started for f alone, and calls report with f's panic (recovered) or
// Goexit (which then goes on ending the goroutine), or with nil.
func guard(f func(), report func(*PanicError)) {
	normal := false
	defer func() {
		if normal {
			report(nil)
			return
		}
		v := recover()
		if v == nil {
			report(&PanicError{Value: goexitValue, Stack: debug.Stack()})
			return
		}
		report(&PanicError{Value: v, Stack: debug.Stack()})
	}()
	f()
	normal = true
}

// contain runs f on a goroutine of its own and waits for it: a panic or
// a runtime.Goexit in f is returned, and the caller's goroutine goes on.
func contain(f func()) (perr *PanicError) {
	done := make(chan struct{})
	go guard(f, func(p *PanicError) { perr = p; close(done) })
	<-done
	return perr
}
