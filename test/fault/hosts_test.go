//go:build linux

package fault

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
)

// host is a host API connection whose events are sorted by call, and whose
// alarms are kept with the time they arrived.
type host struct {
	c       *client.Client
	mu      sync.Mutex
	calls   map[uint64]chan client.Event
	alarms  []timedAlarm
	changed chan struct{} // closed and replaced at each alarm
}

type timedAlarm struct {
	at time.Time
	*client.Alarm
}

func dialHost(t *testing.T, addr, app string) *host {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, "tcp", addr, client.Config{App: app, Token: token, NoFields: true})
	if err != nil {
		t.Fatalf("host %s to %s: %v", app, addr, err)
	}
	h := &host{c: c, calls: map[uint64]chan client.Event{}, changed: make(chan struct{})}
	go h.dispatch()
	t.Cleanup(func() { c.Close(); <-c.Done() })
	return h
}

func (h *host) dispatch() {
	for e := range h.c.Events() {
		switch e := e.(type) {
		case *client.Progress:
			h.callEvents(e.Call) <- e
		case *client.Answered:
			h.callEvents(e.Call) <- e
		case *client.Released:
			h.callEvents(e.Call) <- e
		case *client.Alarm:
			h.mu.Lock()
			h.alarms = append(h.alarms, timedAlarm{time.Now(), e})
			close(h.changed)
			h.changed = make(chan struct{})
			h.mu.Unlock()
		}
	}
}

// callEvents is the buffer of one call's events (ACM, CPG, ANM, REL fit),
// made by whichever side needs it first: an event may be read before the
// ack of its outseize has been returned.
func (h *host) callEvents(call uint64) chan client.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.calls[call]
	if ch == nil {
		ch = make(chan client.Event, 16)
		h.calls[call] = ch
	}
	return ch
}

func (h *host) forget(call uint64) {
	h.mu.Lock()
	delete(h.calls, call)
	h.mu.Unlock()
}

// waitAlarm waits for an alarm number about dpc (cleared or raised) that
// arrived at or after since, and returns when it arrived.
func (h *host) waitAlarm(number uint16, dpc float64, cleared bool, since time.Time, within time.Duration) (time.Time, bool) {
	timeout := time.After(within)
	for {
		h.mu.Lock()
		for _, a := range h.alarms {
			if !a.at.Before(since) && a.Number == number && a.Cleared == cleared && a.Data["dpc"] == dpc {
				h.mu.Unlock()
				return a.at, true
			}
		}
		changed := h.changed
		h.mu.Unlock()
		select {
		case <-changed:
		case <-timeout:
			return time.Time{}, false
		}
	}
}

// alarmsSince is every alarm that arrived at or after since.
func (h *host) alarmsSince(since time.Time) []timedAlarm {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []timedAlarm
	for _, a := range h.alarms {
		if !a.at.Before(since) {
			out = append(out, a)
		}
	}
	return out
}

// Alarm numbers (docs/host-api.md).
const (
	alarmDestinationUnavailable  = 0x17
	alarmDestinationOutOfService = 0x18
)

// noAnswer is the failure of a call neither answered nor released within 10 s.
const noAnswer = "no answer in 10 s"

// outcome is how one call ended.
type outcome struct {
	completed bool
	refused   wire.Status // the outseize's nak
	failure   string      // otherwise: what went wrong
}

// call places one call to dpc, waits for its answer, holds it and releases
// it, waiting for the released.
func (h *host) call(dpc uint32, hold time.Duration) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := h.c.Outseize(ctx, client.Outseize{DPC: dpc, Called: "4930123456", Calling: "4930999"})
	var nak *client.Nak
	if errors.As(err, &nak) {
		return outcome{refused: nak.Status}
	}
	if err != nil {
		return outcome{failure: "outseize: " + err.Error()}
	}
	ch := h.callEvents(s.Call)
	defer h.forget(s.Call)
	answerBy := time.After(10 * time.Second)
	for answered := false; !answered; {
		select {
		case e := <-ch:
			switch e := e.(type) {
			case *client.Answered:
				answered = true
			case *client.Released:
				return outcome{failure: fmt.Sprintf("released before answer, cause %d", e.Cause)}
			}
		case <-answerBy:
			return outcome{failure: noAnswer}
		}
	}
	time.Sleep(hold) // the call's holding time, part of the load, not synchronisation
	if err := h.c.Release(ctx, s.Call, 0, 0); err != nil {
		if errors.As(err, &nak) && nak.Status == wire.StatusUnknownCall {
			// The far end (or a pause) released it first: its released is queued.
			return outcome{failure: "released by the network while held"}
		}
		return outcome{failure: "release: " + err.Error()}
	}
	releasedBy := time.After(10 * time.Second)
	for {
		select {
		case e := <-ch:
			if _, ok := e.(*client.Released); ok {
				return outcome{completed: true}
			}
		case <-releasedBy:
			return outcome{failure: "no released in 10 s after release"}
		}
	}
}

// load places calls at a steady rate until stopped; each call is counted by
// its outcome.
type load struct {
	h         *host
	dpc       uint32
	stopCh    chan struct{}
	stopOnce  sync.Once
	wg        sync.WaitGroup
	mu        sync.Mutex
	offered   int
	completed int
	refused   map[wire.Status]int
	failed    map[string]int
	// refusedAt is when each refusal came (for the detection checks).
	refusedAt []time.Time
}

func startLoad(h *host, dpc uint32, rate float64, hold time.Duration) *load {
	l := &load{h: h, dpc: dpc, stopCh: make(chan struct{}), refused: map[wire.Status]int{}, failed: map[string]int{}}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
		defer tick.Stop()
		sem := make(chan struct{}, circuits) // never more calls under way than circuits
		for {
			select {
			case <-l.stopCh:
				return
			case <-tick.C:
			}
			select {
			case sem <- struct{}{}:
			default:
				continue
			}
			l.mu.Lock()
			l.offered++
			l.mu.Unlock()
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				defer func() { <-sem }()
				o := h.call(dpc, hold)
				l.mu.Lock()
				defer l.mu.Unlock()
				switch {
				case o.completed:
					l.completed++
				case o.refused != 0:
					l.refused[o.refused]++
					l.refusedAt = append(l.refusedAt, time.Now())
				default:
					l.failed[o.failure]++
				}
			}()
		}
	}()
	return l
}

// stop ends the load and waits for its calls to end; again is harmless.
func (l *load) stop() *load {
	l.stopOnce.Do(func() { close(l.stopCh) })
	l.wg.Wait()
	return l
}

func (l *load) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ref := make([]string, 0, len(l.refused))
	for s, n := range l.refused {
		ref = append(ref, fmt.Sprintf("0x%04X:%d", uint16(s), n))
	}
	sort.Strings(ref)
	fail := make([]string, 0, len(l.failed))
	for s, n := range l.failed {
		fail = append(fail, fmt.Sprintf("%q:%d", s, n))
	}
	sort.Strings(fail)
	return fmt.Sprintf("offered %d, completed %d, refused {%s}, failed {%s}", l.offered, l.completed,
		strings.Join(ref, " "), strings.Join(fail, " "))
}

func (l *load) clean() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.refused) == 0 && len(l.failed) == 0 && l.completed == l.offered
}

// answerer takes B's incoming calls and alerts and answers each; it dials B
// again whenever its connection ends (B killed and restarted), until stopped.
type answerer struct {
	addr    string
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	answers int
	dials   int
}

func startAnswerer(t *testing.T, addr string) *answerer {
	ctx, cancel := context.WithCancel(context.Background())
	a := &answerer{addr: addr, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	ready := make(chan struct{})
	go a.run(ready)
	t.Cleanup(func() { cancel(); <-a.done })
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatalf("answerer could not connect to %s", addr)
	}
	return a
}

func (a *answerer) run(ready chan struct{}) {
	defer close(a.done)
	var once sync.Once
	for a.ctx.Err() == nil {
		dctx, cancel := context.WithTimeout(a.ctx, 2*time.Second)
		c, err := client.Dial(dctx, "tcp", a.addr, client.Config{App: "answer", Token: token, Incoming: true, NoFields: true})
		cancel()
		if err != nil {
			select {
			case <-a.ctx.Done():
			case <-time.After(100 * time.Millisecond): // redial backoff
			}
			continue
		}
		a.mu.Lock()
		a.dials++
		a.mu.Unlock()
		once.Do(func() { close(ready) })
		var wg sync.WaitGroup
		go func() {
			select {
			case <-a.ctx.Done():
				c.Close()
			case <-c.Done():
			}
		}()
		for e := range c.Events() {
			in, ok := e.(*client.Incoming)
			if !ok {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
				defer cancel()
				if c.Alert(ctx, in.Call) == nil && c.Answer(ctx, in.Call) == nil {
					a.mu.Lock()
					a.answers++
					a.mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
}
