package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/isupgw/isupgw/host/client"
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
	Duration       time.Duration
	RequestTimeout time.Duration
	Out            io.Writer
	JSON, Quiet    bool
	Now            func() time.Time
	Dial           func(ctx context.Context, network, address string, cfg client.Config) (*client.Client, error)
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
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Dial == nil {
		o.Dial = client.Dial
	}
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	st := &answerStats{causes: map[string]uint64{}}
	var conns []*client.Client
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range o.Conns {
		c, err := o.Dial(ctx, o.Network, o.Address, client.Config{App: o.App, Token: o.Token, Incoming: true, EventBuffer: 1 << 16, NoFields: true})
		if err != nil {
			return fmt.Errorf("answer: connection %d to %s: %w", i+1, o.Address, err)
		}
		conns = append(conns, c)
	}
	if o.Ready != nil {
		o.Ready()
	}
	var wg sync.WaitGroup
	lost := make(chan error, len(conns))
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := answerEvents(ctx, o, c, st); err != nil {
				lost <- err
			}
		}()
	}
	start := o.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var err error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err = <-lost:
			break loop
		case <-tick.C:
			if !o.Quiet {
				emitAnswer(o, st.second(o.Now().Sub(start)))
			}
		}
	}
	for _, c := range conns {
		c.Close()
	}
	wg.Wait()
	st.mu.Lock()
	if !o.JSON {
		fmt.Fprintf(o.Out, "\nanswer side: incoming %d, answered %d, released %d, request errors %d\n", st.tIncoming, st.tAnswered, st.tReleased, st.tErr)
	}
	st.mu.Unlock()
	if err != nil {
		return err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil
	}
	return nil
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

// answerEvents takes one connection's calls; it returns an error when the
// connection is lost while ctx is alive.
func answerEvents(ctx context.Context, o AnswerOptions, c *client.Client, st *answerStats) error {
	take := func(call uint64) {
		rctx, cancel := context.WithTimeout(ctx, o.RequestTimeout)
		defer cancel()
		if !o.NoAlert {
			if err := c.Alert(rctx, call); err != nil {
				st.add(func() { st.errors++; st.tErr++ })
				return
			}
		}
		if err := c.Answer(rctx, call); err != nil {
			st.add(func() { st.errors++; st.tErr++ })
			return
		}
		st.add(func() { st.answered++; st.tAnswered++ })
	}
	for {
		var e client.Event
		var ok bool
		select {
		case <-ctx.Done():
			return nil
		case e, ok = <-c.Events():
			if !ok {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("answer: connection lost: %v", c.Err())
			}
		}
		switch ev := e.(type) {
		case *client.Incoming:
			st.active.Add(1)
			st.add(func() { st.incoming++; st.tIncoming++ })
			if o.Delay > 0 {
				time.AfterFunc(o.Delay, func() { take(ev.Call) })
			} else {
				go take(ev.Call)
			}
		case *client.Released:
			st.active.Add(-1)
			st.add(func() {
				st.released++
				st.tReleased++
				st.causes[strconv.Itoa(int(ev.Cause))]++
			})
		}
	}
}
