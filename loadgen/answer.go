package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// AnswerOptions configure the answering side: hosts that subscribe to
// incoming calls, alert and answer each after Delay, and let the caller
// release.
type AnswerOptions struct {
	Network, Address, Token string
	App                     string // hello's app (default "isupgw-answer")
	Conns                   int    // connections taking calls in turn (default 2)
	// Delay between the incoming call and its ACM and ANM.
	Delay time.Duration
	// NoAlert answers without an ACM first (CON in ITU).
	NoAlert bool
	// Duration ends the run (0: until ctx ends).
	Duration    time.Duration
	Out         io.Writer
	JSON, Quiet bool
	Now         func() time.Time
	// Ready, if set, is called once every connection said hello.
	Ready func()
}

type answerStats struct {
	mu                                    sync.Mutex
	incoming, answered, released, errors  uint64
	causes                                map[string]uint64
	active                                atomic.Int64
	tIncoming, tAnswered, tReleased, tErr uint64 // totals
}

// Answer runs the answering side until ctx ends (or Duration passes).
func Answer(ctx context.Context, o AnswerOptions) error {
	if o.Network == "" {
		o.Network = "tcp"
	}
	if o.Address == "" {
		o.Address = "127.0.0.1:7700"
	}
	if o.App == "" {
		o.App = "isupgw-answer"
	}
	if o.Conns <= 0 {
		o.Conns = 2
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	a := &answerer{o: o, st: &answerStats{causes: map[string]uint64{}}, delay: newDelayQueue(o.Now)}
	defer func() {
		for _, c := range a.conns {
			c.close()
		}
	}()
	for i := range o.Conns {
		c, err := dialConn(ctx, 0, o.Network, o.Address, o.Token, o.App, true,
			func(_ *hconn, p pend, r reply) { a.onReply(p, r) }, a.onEvent)
		if err != nil {
			return fmt.Errorf("answer: connection %d to %s: %w", i+1, o.Address, err)
		}
		a.conns = append(a.conns, c)
	}
	if o.Ready != nil {
		o.Ready()
	}
	dctx, stopDelay := context.WithCancel(context.Background())
	defer stopDelay()
	if o.Delay > 0 {
		go a.delay.run(dctx, a.take)
	}
	st := a.st
	start := o.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	lost := make(chan error, len(a.conns))
	for _, c := range a.conns {
		go func() {
			<-c.done
			lost <- c.err
		}()
	}
	var err error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case e := <-lost:
			if ctx.Err() == nil {
				err = fmt.Errorf("answer: connection lost: %v", e)
			}
			break loop
		case <-tick.C:
			if !o.Quiet {
				emitAnswer(o, st.second(o.Now().Sub(start)))
			}
		}
	}
	st.mu.Lock()
	if !o.JSON {
		fmt.Fprintf(o.Out, "\nanswer side: incoming %d, answered %d, released %d, request errors %d\n", st.tIncoming, st.tAnswered, st.tReleased, st.tErr)
	}
	st.mu.Unlock()
	return err
}

type answerer struct {
	o     AnswerOptions
	st    *answerStats
	conns []*hconn
	delay *delayQueue // incoming calls waiting out the answer delay
}

func emitAnswer(o AnswerOptions, s AnswerSecond) {
	if o.JSON {
		b, _ := json.Marshal(s)
		o.Out.Write(append(b, '\n'))
		return
	}
	fmt.Fprintln(o.Out, s.Text())
}

func (st *answerStats) second(t time.Duration) AnswerSecond {
	st.mu.Lock()
	defer st.mu.Unlock()
	s := AnswerSecond{Type: "answer", T: t.Seconds(), Incoming: st.incoming, Answered: st.answered, Released: st.released,
		Errors: st.errors, Causes: maps.Clone(st.causes), Active: int(st.active.Load())}
	st.incoming, st.answered, st.released, st.errors = 0, 0, 0, 0
	clear(st.causes)
	return s
}

func (st *answerStats) add(f func()) {
	st.mu.Lock()
	f()
	st.mu.Unlock()
}

// take alerts (unless NoAlert) and answers a call, without waiting for the
// acks: the gateway handles one connection's requests in order.
func (a *answerer) take(call uint64, c *hconn) {
	if !a.o.NoAlert {
		c.send(pend{kind: reqAlert}, func(b []byte, seq uint64) []byte { return appendCallRequest(b, "alert", seq, call, 0) })
	}
	c.send(pend{kind: reqAnswer}, func(b []byte, seq uint64) []byte { return appendCallRequest(b, "answer", seq, call, 0) })
}

func (a *answerer) onReply(p pend, r reply) {
	st := a.st
	switch {
	case !r.ok:
		st.add(func() { st.errors++; st.tErr++ })
	case p.kind == reqAnswer:
		st.add(func() { st.answered++; st.tAnswered++ })
	}
}

func (a *answerer) onEvent(c *hconn, e event) {
	st := a.st
	switch e.typ {
	case "incoming":
		st.active.Add(1)
		st.add(func() { st.incoming++; st.tIncoming++ })
		if a.o.Delay <= 0 {
			a.take(e.call, c)
			return
		}
		a.delay.add(a.o.Delay, e.call, c)
	case "released":
		st.active.Add(-1)
		st.add(func() {
			st.released++
			st.tReleased++
			st.causes[causeName(e.cause)]++
		})
	}
}
