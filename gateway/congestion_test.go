package gateway

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host"
	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/sprc"
)

// alarmLog collects a gateway's congestion-control alarms in order.
type alarmLog struct {
	ch   chan sprc.Alarm
	seen []sprc.Alarm // received, not yet matched
}

func newAlarmLog() *alarmLog { return &alarmLog{ch: make(chan sprc.Alarm, 1024)} }

func (l *alarmLog) add(a sprc.Alarm) { l.ch <- a }

// wait returns (and consumes) the first alarm, in arrival order, with the number
// and state that matches, waiting up to 20 s for it.
func (l *alarmLog) wait(t *testing.T, who string, number uint16, cleared bool, match func(sprc.Alarm) bool) sprc.Alarm {
	t.Helper()
	ok := func(a sprc.Alarm) bool {
		return a.Number == number && a.Cleared == cleared && (match == nil || match(a))
	}
	for i, a := range l.seen {
		if ok(a) {
			l.seen = append(l.seen[:i], l.seen[i+1:]...)
			return a
		}
	}
	timeout := time.After(20 * time.Second)
	for {
		select {
		case a := <-l.ch:
			if ok(a) {
				return a
			}
			l.seen = append(l.seen, a)
		case <-timeout:
			t.Fatalf("%s: no alarm 0x%02X (cleared %v) within 20 s", who, number, cleared)
		}
	}
}

func level(n int) func(sprc.Alarm) bool {
	return func(a sprc.Alarm) bool { return a.Data["level"] == n }
}

// TestCongestionEndToEnd slows gateway A's event loop and checks every reaction
// the product promises, across a real M3UA association, then its recovery.
func TestCongestionEndToEnd(t *testing.T) {
	var slow atomic.Int64 // nanoseconds each queued item takes in A's loop
	alarmsA, alarmsB := newAlarmLog(), newAlarmLog()
	cfgA := sprc.Config{ProbeInterval: 50 * time.Millisecond, AverageOver: 4,
		Level1Delay: 300 * time.Millisecond, Level1Average: 150 * time.Millisecond, ClearAverage: 20 * time.Millisecond,
		CodeYellow: sprc.CodeYellowConfig{Enabled: true, SampleSize: 3, EntryLatency: 20 * time.Millisecond, ExitPercent: 40},
		MTP:        sprc.MTPCongestionConfig{T29: 50 * time.Millisecond, T30: 300 * time.Millisecond}}
	cfgB := sprc.Config{ProbeInterval: 50 * time.Millisecond, ACC: sprc.ACCConfig{Mode: sprc.ACCAuto, Duration: 400 * time.Millisecond}}
	// A's hosts hear the alarms through the host API, as in the binary.
	srv, err := host.New(host.Config{TCP: "127.0.0.1:0", NoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	toHosts := func(al sprc.Alarm) {
		alarmsA.add(al)
		srv.RaiseAlarm(host.Alarm{Number: al.Number, Severity: al.Severity, Cleared: al.Cleared, Text: al.Text, Data: al.Data})
	}
	a, b := startPairWith(t,
		[]Option{WithCongestionControl(cfgA, toHosts, nil),
			WithStackOptions(stack.WithSlowdown(func() {
				if d := slow.Load(); d > 0 {
					time.Sleep(time.Duration(d)) // the load: A's loop is slower than its input
				}
			}))},
		[]Option{WithCongestionControl(cfgB, alarmsB.add, nil)})
	called, _ := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")
	srv.Attach(a.Stack)
	hostCtx, stopHost := context.WithCancel(context.Background())
	defer func() { stopHost(); srv.Wait() }()
	if err := srv.Start(hostCtx); err != nil {
		t.Fatal(err)
	}
	hostA, err := client.Dial(hostCtx, "tcp", srv.TCPAddr().String(), client.Config{App: "watcher"})
	if err != nil {
		t.Fatal(err)
	}
	defer hostA.Close()

	// Healthy first.
	stopB := b.drain()
	a.calls(t, 2, 5)
	stopB()

	// Slow A down: two probes every 50 ms at 40 ms each is more than its loop
	// can do, so its queues back up.
	slow.Store(int64(40 * time.Millisecond))
	alarmsA.wait(t, "A", sprc.AlarmStackCongestion, false, func(al sprc.Alarm) bool { return al.Data["direction"] == "outbound" })
	alarmsA.wait(t, "A", sprc.AlarmSystemBusy, false, nil)

	// A refuses its own outseize with 0x0C, and no IAM reaches B.
	before := inspect(t, b).Stats.Received[isup.IAM]

	a.Stack.Submit(stack.Outseize{Tag: 99, DPC: 2, Called: called})
	if r := a.result(t, 99); r.Status != stack.StatusOutboundCongestion {
		t.Fatalf("outseize under outbound congestion: %s", r.Status)
	}

	// B calls A: A releases at once with cause 42 and ACL; B hears the ACL.
	b.Stack.Submit(stack.Outseize{Tag: 1, DPC: 1, Called: called})
	var id stack.CallID
	var rel stack.Released
	for rel.Call == 0 {
		switch e := b.next(t).(type) {
		case stack.Result:
			if e.Tag == 1 {
				id = e.Call
			}
		case stack.Released:
			if id != 0 && e.Call == id {
				rel = e
			}
		}
	}
	if rel.Cause != isup.CauseSwitchingCongestion || rel.ACL < 1 || !rel.Remote {
		t.Fatalf("B's call to congested A: %+v", rel)
	}
	alarmsB.wait(t, "B", sprc.AlarmACC, false, nil)
	// B now throttles new calls to A (ACL 1: half refused at once).
	for i := 0; i < 10; i++ {
		b.Stack.Submit(stack.Outseize{Tag: uint64(100 + i), DPC: 1, Called: called})
	}
	throttled := 0
	for results := 0; results < 10; {
		if r, ok := b.next(t).(stack.Result); ok && r.Tag >= 100 {
			results++
			if r.Status == stack.StatusACCThrottled {
				throttled++
			}
		}
	}
	if throttled == 0 {
		t.Fatal("B did not throttle calls to A under ACL")
	}

	// An SCON from B over M3UA: network congestion at A, alarm 0x0E.
	if err := b.Endpoint.Notify("a", mtp.Congestion{PC: 2}); err != nil {
		t.Fatal(err)
	}
	alarmsA.wait(t, "A", sprc.AlarmNetworkCongestion, false, level(1))

	// The slowdown ends: A's levels clear, Code Yellow and the network
	// congestion end, and B's control of A ends once A stops sending ACL.
	slow.Store(0)
	alarmsA.wait(t, "A", sprc.AlarmStackCongestion, true, nil)
	alarmsA.wait(t, "A", sprc.AlarmSystemBusy, true, nil)
	alarmsA.wait(t, "A", sprc.AlarmNetworkCongestion, true, nil)
	alarmsB.wait(t, "B", sprc.AlarmACC, true, nil)
	waitFor(t, "A's levels at zero", func() (int, bool) {
		s := a.Control.Snapshot()
		return 0, s.Level[sprc.Inbound] == 0 && s.Level[sprc.Outbound] == 0 && !s.CodeYellow
	})
	// A refused B's IAMs only through the stack (REL 42), never shed them at
	// level 2 in this run; its own outseize never produced an IAM.
	if s := inspect(t, a); s.Stats.Refused[stack.StatusOutboundCongestion] < 1 {
		t.Fatalf("A's refusal was not counted: %v", s.Stats.Refused)
	}
	// The connected host heard every alarm: stack congestion, System Busy and
	// network congestion, raised and cleared.
	heard := map[string]bool{}
	for len(heard) < 6 {
		select {
		case e := <-hostA.Events():
			if al, ok := e.(*client.Alarm); ok {
				heard[fmt.Sprintf("0x%02X/%v", al.Number, al.Cleared)] = true
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the host heard only %v", heard)
		}
	}
	for _, want := range []string{"0x16/false", "0x16/true", "0x20/false", "0x20/true", "0x0E/false", "0x0E/true"} {
		if !heard[want] {
			t.Errorf("the host did not hear alarm %s (heard %v)", want, heard)
		}
	}

	// Calls flow both ways again; the refused outseize never reached B.
	stopB = b.drain()
	a.calls(t, 2, 3)
	stopB()
	if got := inspect(t, b).Stats.Received[isup.IAM] - before; got != 3 {
		t.Errorf("B received %d IAMs from A since the refusal, want the 3 recovery calls", got)
	}
	stopA := a.drain()
	b.calls(t, 1, 3)
	stopA()
}

func inspect(t *testing.T, g *testGateway) stack.Snapshot {
	t.Helper()
	s, err := g.Stack.Inspect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLevel1ThrottleEndToEnd: with congestion.level1_outseize: throttle, A at
// outbound level 1 refuses a new call (0x0C, no IAM) while its outbound queue
// is backed up, and admits one (the IAM reaches B, the call completes) once
// the queue has drained, while the level is still 1 (the long average keeps
// it there).
func TestLevel1ThrottleEndToEnd(t *testing.T) {
	var slow atomic.Int64
	alarmsA := newAlarmLog()
	const target = 30 * time.Millisecond
	cfgA := sprc.Config{ProbeInterval: 50 * time.Millisecond, AverageOver: 1000,
		Level1Delay: 100 * time.Millisecond, Level1Average: 60 * time.Millisecond, ClearAverage: 5 * time.Millisecond,
		Level1Outseize: sprc.Level1Throttle, ThrottleTarget: target,
		CodeYellow: sprc.CodeYellowConfig{Enabled: false}}
	a, b := startPairWith(t,
		[]Option{WithCongestionControl(cfgA, alarmsA.add, nil),
			WithStackOptions(stack.WithSlowdown(func() {
				if d := slow.Load(); d > 0 {
					time.Sleep(time.Duration(d))
				}
			}))},
		nil)
	called, _ := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")
	before := inspect(t, b).Stats.Received[isup.IAM]

	// The load: A's loop takes 20 ms an item while a host sends a request
	// (a release of an unknown call: refused, cheap) every 10 ms, so the
	// outbound queue keeps growing.
	slow.Store(int64(20 * time.Millisecond))
	stopLoad := make(chan struct{})
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := range 1000 {
			select {
			case <-stopLoad:
				return
			case <-tick.C:
				a.Stack.Submit(stack.Release{Tag: uint64(1000 + i), Call: stack.CallID(1<<40 + i)})
			}
		}
	}()
	alarmsA.wait(t, "A", sprc.AlarmStackCongestion, false, func(al sprc.Alarm) bool { return al.Data["direction"] == "outbound" })
	// The level alone does not say how long the queue is now (a slow item
	// can make one probe late): wait for a long, growing queue whose last
	// request waited beyond the target.
	// The average is over AverageOver probes, the window's empty slots
	// counting as zero: until the delays add up, one short probe can take the
	// level back to 0 (average below ClearAverage). Twice the clearing
	// average keeps level 1 for the rest of the test (the window rolls over
	// in 50 s).
	waitFor(t, "an outbound average that holds level 1", func() (time.Duration, bool) {
		avg := a.Control.Snapshot().AverageDelay[sprc.Outbound]
		return avg, avg >= 2*cfgA.ClearAverage
	})
	waitFor(t, "a backed-up outbound queue", func() (int, bool) {
		n := a.Stack.QueueLen(stack.Outbound)
		return n, n >= 10 && a.Stack.OutboundWait() >= target
	})
	a.Stack.Submit(stack.Outseize{Tag: 99, DPC: 2, Called: called})
	if r := a.result(t, 99); r.Status != stack.StatusOutboundCongestion {
		t.Fatalf("outseize behind a backed-up queue at level 1: %s, want outbound congestion", r.Status)
	}

	close(stopLoad)
	<-loadDone
	slow.Store(0)
	waitFor(t, "A's outbound queue to drain", func() (time.Duration, bool) {
		w := a.Stack.OutboundWait()
		return w, w < target
	})
	if lvl := a.Control.Snapshot().Level[sprc.Outbound]; lvl != 1 {
		t.Fatalf("outbound level %d after the drain, want 1 (the test needs the level to hold)", lvl)
	}
	stopB := b.drain()
	a.calls(t, 2, 1) // admitted at level 1, answered, released
	stopB()
	st := a.Control.Snapshot()
	if st.Level1Admitted != 1 || st.Level[sprc.Outbound] != 1 {
		t.Fatalf("throttled %d at outbound level %d: want the one call admitted at level 1", st.Level1Admitted, st.Level[sprc.Outbound])
	}
	if got := inspect(t, b).Stats.Received[isup.IAM] - before; got != 1 {
		t.Fatalf("B received %d IAMs from A, want only the admitted call's", got)
	}
}
