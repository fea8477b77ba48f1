package loadgen

import (
	"context"
	"sync"
	"time"
)

// heldCall is a call waiting out a delay (the answering side's answer delay, the
// calling side's hold time).
type heldCall struct {
	due  time.Time
	call uint64
	conn *hconn
}

// delayQueue runs an action on each call once its delay has passed. The delay
// is the same for every call, so arrival order is due order and a slice is the
// whole queue.
type delayQueue struct {
	now  func() time.Time
	mu   sync.Mutex
	q    []heldCall
	wake chan struct{}
}

func newDelayQueue(now func() time.Time) *delayQueue {
	return &delayQueue{now: now, wake: make(chan struct{}, 1)}
}

// add queues a call due after d.
func (dq *delayQueue) add(d time.Duration, call uint64, c *hconn) {
	dq.mu.Lock()
	dq.q = append(dq.q, heldCall{due: dq.now().Add(d), call: call, conn: c})
	first := len(dq.q) == 1
	dq.mu.Unlock()
	if first {
		select {
		case dq.wake <- struct{}{}:
		default:
		}
	}
}

// run calls act for each call as it falls due, until ctx ends.
func (dq *delayQueue) run(ctx context.Context, act func(call uint64, c *hconn)) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		dq.mu.Lock()
		now := dq.now()
		n := 0
		for n < len(dq.q) && !dq.q[n].due.After(now) {
			n++
		}
		due := append([]heldCall(nil), dq.q[:n]...)
		dq.q = dq.q[n:]
		wait := time.Hour
		if len(dq.q) > 0 {
			wait = dq.q[0].due.Sub(now)
		}
		dq.mu.Unlock()
		for _, h := range due {
			act(h.call, h.conn)
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-dq.wake:
		}
	}
}
