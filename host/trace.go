package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
)

// Tracer is what the trace request needs of the stack (*stack.Stack has it).
type Tracer interface {
	Trace(ctx context.Context, f stack.TraceFilter, sink func(string)) (uint64, error)
	Untrace(ctx context.Context, id uint64) error
}

// traceBuffer is how many trace lines wait for a slow reader before lines are
// dropped (and counted): a trace must never cost the stack or the host's own
// messages.
const traceBuffer = 4096

type traceRequest struct {
	DPC    *pcField `json:"dpc"`
	CIC    *int     `json:"cic"`
	Called string   `json:"called"`
}

// trace starts a call trace for this connection: after the ack, one "trace"
// line per matching message, request, result and release, until the
// connection closes.
func (c *conn) trace(seq uint64, line []byte) {
	var r traceRequest
	if err := json.Unmarshal(line, &r); err != nil {
		c.nak(&seq, wire.StatusBadValue, fmt.Sprintf("malformed trace request: %v", err), 0)
		return
	}
	var f stack.TraceFilter
	if r.DPC != nil {
		var rf *refusal
		if f.DPC, rf = r.DPC.resolve("dpc", c.s.pcs); rf != nil {
			c.nak(&seq, rf.status, rf.detail, 0)
			return
		}
	}
	if r.CIC != nil {
		if *r.CIC < 1 || *r.CIC > 0x3FFF {
			c.nak(&seq, wire.StatusBadValue, fmt.Sprintf(`field "cic": %d is not a CIC (1-16383)`, *r.CIC), 0)
			return
		}
		f.CIC = uint16(*r.CIC)
	}
	if r.Called != "" {
		if _, err := isup.ParseDigits(r.Called); err != nil || len(r.Called) > maxDigits {
			c.nak(&seq, wire.StatusBadDigits, fmt.Sprintf(`field "called": %q is not a number prefix`, r.Called), 0)
			return
		}
		f.Called = r.Called
	}
	var tr Tracer
	ok := false
	if ref := c.s.stack.Load(); ref != nil {
		tr, ok = ref.s.(Tracer)
	}
	if !ok {
		c.nak(&seq, wire.StatusUnknownType, "this gateway's stack offers no trace", 0)
		return
	}
	lines := make(chan string, traceBuffer)
	var dropped atomic.Uint64
	ctx, cancel := context.WithTimeout(c.s.runCtx(), 5*time.Second)
	id, err := tr.Trace(ctx, f, func(l string) {
		select {
		case lines <- l:
		default:
			dropped.Add(1)
		}
	})
	cancel()
	if errors.Is(err, stack.ErrTooManyTraces) {
		c.nak(&seq, wire.StatusBadRequest, fmt.Sprintf("%d traces are running already, the most the gateway allows", stack.MaxTraces), 0)
		return
	}
	if err != nil {
		c.nak(&seq, wire.StatusShuttingDown, "the stack did not start the trace: "+err.Error(), 0)
		return
	}
	c.s.log.Info("call trace started", "conn", c.id, "app", c.app, "dpc", c.s.cfg.PointCodes.Format(f.DPC), "cic", f.CIC, "called", f.Called)
	c.ack(seq, map[string]any{"trace": id})
	c.s.wg.Add(1)
	go func() {
		defer c.s.wg.Done()
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = tr.Untrace(ctx, id)
			cancel()
		}()
		for {
			select {
			case <-c.closed:
				return
			case l := <-lines:
				if n := dropped.Swap(0); n > 0 {
					c.sendTrace(fmt.Sprintf("(%d trace lines dropped: the reader is too slow)", n))
				}
				if !c.sendTrace(l) {
					dropped.Add(1)
				}
			}
		}
	}()
}

// sendTrace queues a trace line unless the host's queue is nearly full: a
// trace line is dropped rather than the host disconnected.
func (c *conn) sendTrace(text string) bool {
	if c.out.room() <= c.s.cfg.QueueSize/8 {
		return false
	}
	w := newObj(wire.TypeTrace, len(text)+32)
	w.str("text", text)
	return c.send(wire.TypeTrace, w.end())
}

// room is how many more lines the queue takes now.
func (q *sendQueue) room() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.limit - len(q.lines)
}
