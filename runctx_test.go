package agentrt

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type runCtxKey struct{}

func TestRunCtxCancelReachesDerivedContexts(t *testing.T) {
	t.Parallel()
	var c runCtx
	c.init(context.WithValue(context.Background(), runCtxKey{}, "v"))
	defer c.release()
	child, cancel := context.WithTimeout(&c, time.Hour)
	defer cancel()
	assert.Equal(t, "v", child.Value(runCtxKey{}))
	assert.NoError(t, c.Err())
	c.cancel(context.Canceled)
	select {
	case <-child.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a context derived from the run's was not cancelled")
	}
	assert.ErrorIs(t, child.Err(), context.Canceled)
	assert.ErrorIs(t, c.Err(), context.Canceled)
	select {
	case <-c.Done():
	default:
		t.Fatal("Done made after cancel is not closed")
	}
}

func TestRunCtxFollowsTheCallersContext(t *testing.T) {
	t.Parallel()
	parent, cancel := context.WithCancelCause(context.Background())
	var c runCtx
	c.init(parent)
	defer c.release()
	done := c.Done()
	boom := errors.New("boom")
	cancel(boom)
	assert.ErrorIs(t, c.Err(), context.Canceled, "Err reflects the caller's context at once")
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the caller's cancellation did not reach Done")
	}
	assert.ErrorIs(t, context.Cause(&c), boom)
}

func TestRunCtxAfterFuncStop(t *testing.T) {
	t.Parallel()
	var c runCtx
	c.init(context.Background())
	ran := make(chan struct{})
	stop := c.AfterFunc(func() { close(ran) })
	require.True(t, stop(), "stopped before cancel")
	require.False(t, stop(), "already stopped")
	stop2 := c.AfterFunc(func() { close(ran) })
	c.cancel(context.Canceled)
	<-ran
	require.False(t, stop2(), "already ran")
	late := make(chan struct{})
	c.AfterFunc(func() { close(late) })
	<-late // a func registered after cancel runs at once
}
