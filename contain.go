package agentrt

import (
	"context"
	"iter"
	"runtime/debug"
	"sync"
)

// User code (planners, tools, decoders, checkers, hooks, compressors)
// runs on a goroutine of the run's own, never on the goroutine that ranges
// over Run: a panic there is recovered, and a runtime.Goexit (t.FailNow,
// require.* in a test) ends only that goroutine. Either way the run gets a
// *PanicError and carries on, so no callback can break a run or leave its
// session with an unanswered tool_use.

// goexitValue is the PanicError.Value of a callback that called
// runtime.Goexit.
const goexitValue = "runtime.Goexit called"

// job is what the worker is asked to do.
type job uint8

const (
	jobFunc     job = iota // call r.fn
	jobPlan                // the planner call of r.pl
	jobDecide              // decide r.cur
	jobCall                // decide and execute r.cur
	jobTool                // call r.cur's Execute alone (executeHere)
	jobCompress            // the Compressor call r.cmp
)

// workerMsg is what the worker hands the run's goroutine: an event to
// yield, or the end of a job with its panic, if any.
type workerMsg struct {
	ev   Event
	perr *PanicError
	done bool
}

// worker runs a run's callbacks one at a time on a coroutine of its own
// (iter.Pull): a switch to it and back costs about as much as a function
// call through the scheduler-free coroutine switch, not a goroutine
// wake-up. It is started on first use and replaced if a callback calls
// runtime.Goexit. While a job runs, the run's goroutine yields the events
// it sends (streamed text, permission decisions, sub-agent events).
type worker struct {
	next  func() (workerMsg, bool)
	stop  func()
	yield func(workerMsg) bool
	body  *workerBody // the coroutine's function, while the run has one
	job   job
	busy  bool // a job runs on the coroutine
}

// workerBody is the worker coroutine's function, made once and reused
// by later runs (workerBodies): a run takes one for its worker and
// gives it back when the worker has ended, so that starting a worker
// allocates no closure of its own. It is never handed to user code.
type workerBody struct {
	r   *run
	seq func(yield func(workerMsg) bool)
}

var workerBodies = sync.Pool{New: func() any {
	b := &workerBody{}
	b.seq = func(yield func(workerMsg) bool) {
		r := b.r
		r.w.yield = yield
		for {
			if !yield(workerMsg{perr: r.runGuarded(r.w.job), done: true}) {
				return
			}
		}
	}
	return b
}}

// goexitMarker is the panic a job's Goexit is turned into inside the
// coroutine, so that iter.Pull hands it to the run's goroutine as a panic
// (which do recovers) instead of calling runtime.Goexit there.
type goexitMarker struct{ stack []byte }

// do runs a job on the worker and waits for it. It returns the job's
// panic or Goexit, or nil.
func (r *run) do(j job) (perr *PanicError) {
	w := &r.w
	if w.next == nil {
		if w.body == nil {
			w.body = workerBodies.Get().(*workerBody)
			w.body.r = r
		}
		w.next, w.stop = iter.Pull(w.body.seq)
	}
	w.job = j
	defer func() {
		r.w.busy = false
		if v := recover(); v != nil {
			m, ok := v.(goexitMarker)
			if !ok {
				panic(v) // not a callback's: a bug of the runtime itself
			}
			// The coroutine is gone; the next job starts another.
			w.next, w.stop, w.yield = nil, nil, nil
			perr = &PanicError{Value: goexitValue, Stack: m.stack, goexit: true}
		}
	}()
	for {
		m, ok := w.next()
		if !ok {
			return nil
		}
		if !m.done {
			r.emit(m.ev)
			continue
		}
		return m.perr
	}
}

// runGuarded runs a job on the coroutine: a panic is recovered and
// returned; a Goexit becomes a goexitMarker panic (see do).
func (r *run) runGuarded(j job) (perr *PanicError) {
	normal := false
	defer func() {
		if normal {
			return
		}
		r.w.busy = false
		v := recover()
		if v == nil {
			panic(goexitMarker{stack: debug.Stack()})
		}
		perr = &PanicError{Value: v, Stack: debug.Stack()}
	}()
	r.w.busy = true
	r.runJob(j)
	r.w.busy = false
	normal = true
	return nil
}

// doFunc runs f on the worker; see do.
func (r *run) doFunc(f func()) *PanicError {
	r.fn = f
	perr := r.do(jobFunc)
	r.fn = nil
	return perr
}

// send passes an event from the worker to the run's goroutine, which
// yields it, or yields it at once when no job runs. While a call is decided
// on the run's goroutine (decideInline) the event is held until the
// decision is made: yielding runs the consumer's loop body, whose panic
// must not meet decideInline's recover.
func (r *run) send(ev Event) {
	switch {
	case r.w.busy:
		r.w.yield(workerMsg{ev: ev})
	case r.inline:
		if r.heldEv == nil {
			r.heldEv = ev
		} else {
			r.moreEvs = append(r.moreEvs, ev)
		}
	default:
		r.emit(ev)
	}
}

// decideHere reports whether c can be decided on the run's goroutine: its
// decoder and the permission checker are this package's, and no hook runs.
func (r *run) decideHere(c *call) bool {
	if !c.entry.builtin || len(r.p.hooks) > 0 {
		return false
	}
	_, ok := r.permission.(builtinChecker)
	return ok
}

// decideInline decides c on the run's goroutine, recovering a panic of
// the decision; the events it sent are yielded afterwards, outside the
// recover.
func (r *run) decideInline(c *call) bool {
	r.inline = true
	ok, perr := r.decideRecovered(c)
	r.inline = false
	if ev := r.heldEv; ev != nil {
		r.heldEv = nil
		r.emit(ev)
		for _, ev := range r.moreEvs {
			r.emit(ev)
		}
		r.moreEvs = nil
	}
	if perr != nil {
		r.contained(c, perr)
		return false
	}
	return ok
}

func (r *run) decideRecovered(c *call) (ok bool, perr *PanicError) {
	defer func() {
		if v := recover(); v != nil {
			ok, perr = false, &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return r.decide(c), nil
}

// stopWorker ends the worker's coroutine.
func (r *run) stopWorker() {
	if r.w.stop != nil {
		// A job still running (the caller's loop body panicked while it
		// streamed) is told to stop, then waited for.
		r.rctx.cancel(context.Canceled)
		r.w.stop()
		r.w.next, r.w.stop, r.w.yield = nil, nil, nil
	}
	if b := r.w.body; b != nil { // the coroutine has ended
		b.r, r.w.body = nil, nil
		workerBodies.Put(b)
	}
}

func (r *run) runJob(j job) {
	switch j {
	case jobFunc:
		r.fn()
	case jobPlan:
		r.planJob()
	case jobDecide:
		c := r.cur
		c.skip = !r.decide(c)
	case jobCall:
		c := r.cur
		if r.decide(c) {
			r.execute(c)
		}
	case jobCompress:
		r.compressJob()
	case jobTool:
		t := &r.tool
		t.out, t.parts, t.perr, t.err = callTool(t.ctx, r.cur)
	}
}

// guard runs f on the current goroutine, which must be one the run
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
			report(&PanicError{Value: goexitValue, Stack: debug.Stack(), goexit: true})
			return
		}
		report(&PanicError{Value: v, Stack: debug.Stack()})
	}()
	f()
	normal = true
}
