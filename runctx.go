package agentrt

import (
	"context"
	"sync"
)

// runCtx is the context of a run: the caller's context plus the run's own
// cancellation, used when the caller breaks out of the range loop while a
// planner or tool is running. It does what context.WithCancel does, but it
// lives inside the run and makes its Done channel only when something asks
// for it, so a run whose callbacks never wait on their context costs no
// allocation for it. Contexts derived from it (a tool's timeout) are told
// of its cancellation through AfterFunc, as the context package expects of
// a custom Context, with no goroutine.
type runCtx struct {
	context.Context // the caller's

	mu     sync.Mutex
	done   chan struct{} // made on first use
	err    error         // set by cancel
	afters []*runCtxAfter
	stop   func() bool // unregisters from the caller's context
}

type runCtxAfter struct {
	f    func()
	done bool // ran or stopped
}

// init sets the caller's context; its cancellation cancels c.
func (c *runCtx) init(parent context.Context) {
	c.Context = parent
	if parent.Done() != nil {
		c.stop = context.AfterFunc(parent, func() { c.cancel(parent.Err()) })
	}
}

// release unregisters c from the caller's context; call it when the run
// ends.
func (c *runCtx) release() {
	if c.stop != nil {
		c.stop()
	}
}

func (c *runCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		}
	}
	return c.done
}

func (c *runCtx) Err() error {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.Context.Err()
}

// cancel cancels c with err (context.Canceled, or the caller's error).
func (c *runCtx) cancel(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	afters := c.afters
	c.afters = nil
	for _, a := range afters {
		a.done = true
	}
	c.mu.Unlock()
	for _, a := range afters {
		go a.f()
	}
}

// AfterFunc arranges for f to run in its own goroutine once c is
// cancelled, as context.AfterFunc does; the context package uses it to
// cancel contexts derived from c.
func (c *runCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := &runCtxAfter{f: f}
	if c.err != nil {
		a.done = true
		go f()
	} else {
		c.afters = append(c.afters, a)
	}
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if a.done {
			return false
		}
		a.done = true
		for i, b := range c.afters {
			if b == a {
				c.afters = append(c.afters[:i], c.afters[i+1:]...)
				break
			}
		}
		return true
	}
}
