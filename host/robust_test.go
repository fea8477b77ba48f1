package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host"
	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/isup/stack"
)

// rawConn is a host typed by hand: lines in, lines out.
type rawConn struct {
	nc net.Conn
	br *bufio.Reader
	t  testing.TB
}

func (n *node) raw(t testing.TB, network string, d *net.Dialer) *rawConn {
	t.Helper()
	addr := n.tcp
	if network == "unix" {
		addr = n.unix
	}
	if d == nil {
		d = &net.Dialer{}
	}
	nc, err := d.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawConn{nc: nc, br: bufio.NewReaderSize(nc, 1<<16), t: t}
}

func (r *rawConn) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.nc, line+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

// recv reads one line; the deadline only bounds a failing test.
func (r *rawConn) recv() (wire.Message, string) {
	r.t.Helper()
	r.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := r.br.ReadString('\n')
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	var m wire.Message
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		r.t.Fatalf("gateway sent invalid JSON %q: %v", line, err)
	}
	return m, line
}

func (r *rawConn) roundTrip(line string) wire.Message {
	r.t.Helper()
	r.send(line)
	m, _ := r.recv()
	return m
}

// Bad input on TCP and on the Unix socket: each line gets a nak naming the
// problem, with the seq echoed when the line had one, and the connection
// stays usable; unknown fields are ignored.
func TestBadInput(t *testing.T) {
	a, _ := startPair(t, pairOpts{})
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			r := a.raw(t, network, nil)
			expect := func(line string, want wire.Status, detail string) {
				t.Helper()
				m := r.roundTrip(line)
				if m.Type != wire.TypeNak || m.Status != want || !strings.Contains(m.Detail, detail) || m.Name != want.Name() {
					t.Errorf("%.60s: got %+v, want nak %s with %q", line, m, want, detail)
				}
				var seq struct {
					Seq *uint64 `json:"seq"`
				}
				if want != wire.StatusLineTooLong && json.Unmarshal([]byte(line), &seq) == nil && seq.Seq != nil && (m.Seq == nil || *m.Seq != *seq.Seq) {
					t.Errorf("%.60s: seq not echoed: %+v", line, m)
				}
			}
			expect(`{"type":"status","seq":1}`, wire.StatusNotAuthenticated, "hello first")
			expect(`{"type":"hello","seq":2,"version":2,"token":"s3cret"}`, wire.StatusVersionUnsupported, "version 1")
			if m := r.roundTrip(`{"type":"hello","seq":3,"version":1,"token":"s3cret","app":"typist","future_field":[1,2]}`); m.Type != wire.TypeAck || *m.Seq != 3 || m.Data["version"] != float64(1) {
				t.Fatalf("hello: %+v", m)
			}
			expect(`{"type":"hello","seq":4,"version":1,"token":"s3cret"}`, wire.StatusAlreadyHello, "completed")
			expect(`{"type":"outseize","seq":5,"dpc":2,`, wire.StatusBadJSON, "malformed JSON")
			expect(`not json at all`, wire.StatusBadJSON, "malformed JSON")
			expect(`[1,2,3]`, wire.StatusBadJSON, "JSON object")
			expect(`{"seq":6}`, wire.StatusMissingField, `"type"`)
			expect(`{"type":"dial","seq":7}`, wire.StatusUnknownType, `"dial"`)
			expect(`{"type":"outseize","seq":8,"dpc":2}`, wire.StatusMissingField, `"called"`)
			expect(`{"type":"outseize","seq":9,"called":"123"}`, wire.StatusMissingField, `"dpc"`)
			expect(`{"type":"answer","seq":10}`, wire.StatusMissingField, `"call"`)
			expect(`{"type":"outseize","seq":11,"dpc":2,"called":"49-30"}`, wire.StatusBadDigits, `'-' at position 2`)
			expect(`{"type":"outseize","seq":12,"dpc":"two","called":"1"}`, wire.StatusBadValue, `"dpc"`)
			expect(`{"type":"overload","seq":13,"level":3}`, wire.StatusBadValue, `"level"`)
			expect(`{"type":"status","seq":14,"pad":"`+strings.Repeat("x", wire.MaxLine)+`"}`, wire.StatusLineTooLong, "65536")
			// A line of exactly MaxLine octets is accepted.
			line := `{"type":"status","seq":15,"pad":""}`
			line = line[:len(line)-2] + strings.Repeat("y", wire.MaxLine-len(line)) + `"}`
			if m := r.roundTrip(line); m.Type != wire.TypeAck || *m.Seq != 15 {
				t.Errorf("a line of %d octets: %+v", len(line), m)
			}
			// CRLF line ends and blank lines are fine.
			r.send("")
			if m := r.roundTrip("{\"type\":\"status\",\"seq\":16}\r"); m.Type != wire.TypeAck || *m.Seq != 16 || m.Data["hosts"] == nil {
				t.Errorf("status after bad input: %+v", m)
			}
		})
	}
	m := a.srv.Metrics()
	if m.LinesTooLong != 2 || m.Naks[uint16(wire.StatusBadJSON)] != 6 || m.Requests["invalid"] < 8 {
		t.Errorf("metrics: %+v", m)
	}

	// A wrong token: nak, then the gateway closes the connection.
	for _, network := range []string{"tcp", "unix"} {
		r := a.raw(t, network, nil)
		m := r.roundTrip(`{"type":"hello","seq":1,"version":1,"token":"guess"}`)
		if m.Type != wire.TypeNak || m.Status != wire.StatusBadToken || !strings.Contains(m.Detail, "wrong token") {
			t.Errorf("%s: wrong token: %+v", network, m)
		}
		r.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := r.br.ReadString('\n'); !errors.Is(err, io.EOF) {
			t.Errorf("%s: after a wrong token: %v, want EOF", network, err)
		}
	}
	if d := a.srv.Metrics().Disconnects["bad token"]; d != 2 {
		t.Errorf("bad token disconnects: %d", d)
	}
}

// A host process killed mid-call (SIGKILL): its call is released towards the
// network with cause 41, the far host hears it, and every circuit on both
// gateways is idle again. The same for a host that resets its connection
// while it owns an incoming call.
func TestHostKilledMidCall(t *testing.T) {
	a, b := startPair(t, pairOpts{})
	callee := b.dial(t, "unix", client.Config{Incoming: true})
	calleeRel := callee.answerer()

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHost$")
	cmd.Env = append(os.Environ(), "HOSTAPI_HELPER="+a.tcp)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "answered ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %q %v", line, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	r := <-calleeRel
	if r == nil || !r.Remote || r.Cause != 41 || r.Location != 2 {
		t.Fatalf("callee released: %+v", r)
	}
	a.waitIdle(t)
	b.waitIdle(t)
	m := a.srv.Metrics()
	if m.ReleasedOnDisconnect != 1 || m.Disconnects["closed by host"]+m.Disconnects["read error"] != 1 {
		t.Errorf("metrics: %+v", m)
	}

	// An incoming call's host resets its connection after answering.
	caller := a.dial(t, "tcp", client.Config{})
	crasher := b.raw(t, "tcp", nil)
	crasher.roundTrip(`{"type":"hello","seq":1,"version":1,"token":"s3cret","incoming":true}`)
	s, err := caller.Outseize(ctx10(t), client.Outseize{DPC: 2, Called: "777"})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := crasher.recv()
	if in.Type != wire.TypeIncoming {
		t.Fatalf("crasher got %+v", in)
	}
	if m := crasher.roundTrip(fmt.Sprintf(`{"type":"answer","seq":2,"call":%d}`, in.Call)); m.Type != wire.TypeAck {
		t.Fatalf("answer: %+v", m)
	}
	next[*client.Answered](caller)
	crasher.nc.(*net.TCPConn).SetLinger(0) // RST, as a crash leaves it
	crasher.nc.Close()
	if rel := next[*client.Released](caller); rel.Call != s.Call || !rel.Remote || rel.Cause != 41 {
		t.Fatalf("caller released: %+v", rel)
	}
	a.waitIdle(t)
	b.waitIdle(t)
}

// TestHelperHost is the host process TestHostKilledMidCall kills: it places a
// call, says so once it is answered, and waits to be killed.
func TestHelperHost(t *testing.T) {
	addr := os.Getenv("HOSTAPI_HELPER")
	if addr == "" {
		t.Skip("run by TestHostKilledMidCall")
	}
	ctx := context.Background()
	c, err := client.Dial(ctx, "tcp", addr, client.Config{App: "doomed", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Outseize(ctx, client.Outseize{DPC: 2, Called: "4930123456"})
	if err != nil {
		t.Fatal(err)
	}
	for e := range c.Events() {
		if an, ok := e.(*client.Answered); ok && an.Call == s.Call {
			fmt.Printf("answered %d\n", s.Call)
			os.Stdout.Sync()
			break
		}
	}
	select {} // until killed
}

// A host that stops reading fills its queue and is disconnected (logged and
// counted); its call is released towards the network, and another host's
// calls on the same gateway go on meanwhile and after.
func TestSlowReaderDisconnected(t *testing.T) {
	a, b := startPair(t, pairOpts{hostB: host.Config{QueueSize: 16}})
	caller := a.dial(t, "tcp", client.Config{})
	callee := a.dial(t, "unix", client.Config{Incoming: true})
	callee.answerer()
	other := b.dial(t, "unix", client.Config{}) // B's well-behaved host

	// The slow host: a small receive buffer, so the kernel holds little for it.
	small := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return serr
	}}
	slow := b.raw(t, "tcp", small)
	slow.roundTrip(`{"type":"hello","seq":1,"version":1,"token":"s3cret","incoming":true}`)
	s, err := caller.Outseize(ctx10(t), client.Outseize{DPC: 2, Called: "555"})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := slow.recv()
	if m := slow.roundTrip(fmt.Sprintf(`{"type":"answer","seq":2,"call":%d}`, in.Call)); m.Type != wire.TypeAck {
		t.Fatalf("answer: %+v", m)
	}
	next[*client.Answered](caller)

	// From now on the slow host only writes: every line gets a nak it never
	// reads. The flood is bounded; the gateway cuts it off long before.
	flooded := make(chan error, 1)
	go func() {
		chunk := []byte(strings.Repeat("{}\n", 4096))
		for i := 0; i < 4096; i++ {
			if _, err := slow.nc.Write(chunk); err != nil {
				flooded <- err
				return
			}
		}
		flooded <- nil
	}()
	// Meanwhile B's other host places and completes calls.
	for i := 0; i < 5; i++ {
		s := other.call(1, "4930123456")
		if err := other.Release(ctx10(t), s.Call, 0, 0); err != nil {
			t.Fatal(err)
		}
		next[*client.Released](other)
	}
	// The slow host's call ends with cause 41: the gateway cut it off.
	if rel := next[*client.Released](caller); rel.Call != s.Call || !rel.Remote || rel.Cause != 41 {
		t.Fatalf("caller released: %+v", rel)
	}
	if err := <-flooded; err == nil {
		t.Error("the flood of 50 MB went through without the slow host being disconnected")
	}
	// And B's other host still works after.
	s2 := other.call(1, "4930123456")
	if err := other.Release(ctx10(t), s2.Call, 0, 0); err != nil {
		t.Fatal(err)
	}
	next[*client.Released](other)
	a.waitIdle(t)
	b.waitIdle(t)
	m := b.srv.Metrics()
	if m.Disconnects["send queue full"] != 1 || m.QueueDrops < 1 || m.ReleasedOnDisconnect != 1 {
		t.Errorf("metrics: %+v", m)
	}
}

// Overload levels declared by hosts: the callback hears the maximum whenever
// it changes, and a host that leaves counts as 0.
func TestOverload(t *testing.T) {
	levels := make(chan int, 16)
	a, _ := startPair(t, pairOpts{optsA: []host.Option{host.OnOverload(func(l int) { levels <- l })}})
	h1 := a.dial(t, "tcp", client.Config{App: "one"})
	h2 := a.dial(t, "unix", client.Config{App: "two"})
	step := func(h *hostConn, level, want int) {
		t.Helper()
		if err := h.Overload(ctx10(t), level); err != nil {
			t.Fatal(err)
		}
		if want >= 0 {
			if got := <-levels; got != want {
				t.Fatalf("overload callback %d, want %d", got, want)
			}
		}
	}
	step(h1, 1, 1)
	step(h2, 2, 2)
	step(h2, 2, -1) // no change, no callback
	step(h1, 2, -1)
	step(h1, 0, -1) // h2 still at 2
	st, err := h1.Status(ctx10(t))
	if err != nil || st["overload"] != float64(0) || st["overload_max"] != float64(2) {
		t.Fatalf("status: %v %v", st, err)
	}
	h2.Close()
	if got := <-levels; got != 0 {
		t.Fatalf("after the overloaded host left: %d", got)
	}
	step(h1, 1, 1)
	if a.srv.OverloadLevel() != 1 {
		t.Errorf("OverloadLevel %d", a.srv.OverloadLevel())
	}
	select {
	case l := <-levels:
		t.Errorf("extra callback %d", l)
	default:
	}
}

// Alarms raised by congestion control (RaiseAlarm) and by the stack reach
// every host; lasting ones are sent to hosts that connect later, and listed by
// status until cleared.
func TestAlarms(t *testing.T) {
	a, b := startPair(t, pairOpts{})
	h1 := a.dial(t, "tcp", client.Config{})
	a.srv.RaiseAlarm(host.Alarm{Number: wire.AlarmNetworkCongestion, Severity: wire.SeverityMajor, Text: "SS7 signaling network congestion", Data: map[string]any{"dpc": 2, "level": 1}})
	a.srv.RaiseAlarm(host.Alarm{Number: wire.AlarmStackCongestion, Severity: wire.SeverityMajor, Text: "SS7 signaling stack congestion", Data: map[string]any{"direction": "outbound", "level": 2}})
	al := next[*client.Alarm](h1)
	if al.Number != 0x0E || al.Severity != 3 || al.Cleared || al.Data["dpc"] != float64(2) || al.Data["level"] != float64(1) {
		t.Fatalf("alarm: %+v", al)
	}
	if al = next[*client.Alarm](h1); al.Number != 0x16 || al.Data["direction"] != "outbound" || al.Data["level"] != float64(2) {
		t.Fatalf("alarm: %+v", al)
	}
	h2 := a.dial(t, "unix", client.Config{})
	seen := map[uint16]bool{}
	for i := 0; i < 2; i++ {
		seen[next[*client.Alarm](h2).Number] = true
	}
	if !seen[0x0E] || !seen[0x16] {
		t.Fatalf("a late host got %v", seen)
	}
	a.srv.RaiseAlarm(host.Alarm{Number: wire.AlarmNetworkCongestion, Severity: wire.SeverityMajor, Cleared: true, Text: "cleared", Data: map[string]any{"dpc": 2}})
	for _, h := range []*hostConn{h1, h2} {
		if al := next[*client.Alarm](h); !al.Cleared || al.Number != 0x0E {
			t.Fatalf("alarm_cleared: %+v", al)
		}
	}
	st, err := h2.Status(ctx10(t))
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := st["alarms"].([]any); len(list) != 1 {
		t.Errorf("active alarms: %v", st["alarms"])
	}

	// A stack alarm: A blocks circuits 1-4 towards B (hardware group
	// blocking); B's host hears 0x34 with the range.
	hb := b.dial(t, "tcp", client.Config{})
	a.g.Stack.Submit(stack.Maintenance{Op: stack.OpBlock, DPC: 2, CIC: 1, Range: 3, Hardware: true})
	if al := next[*client.Alarm](hb); al.Number != 0x34 || al.Data["dpc"] != float64(1) || al.Data["cic"] != float64(1) || al.Data["range"] != float64(3) {
		t.Fatalf("stack alarm: %+v", al)
	}
	a.g.Stack.Submit(stack.Maintenance{Op: stack.OpUnblock, DPC: 2, CIC: 1, Range: 3, Hardware: true})
	a.waitIdle(t)
	b.waitIdle(t)
}

// Incoming rules: by called-number prefix and point code to named
// applications; a call no rule matches is released with cause 1, and one whose
// rule has no host connected with cause 27.
func TestIncomingRules(t *testing.T) {
	a, b := startPair(t, pairOpts{hostB: host.Config{Rules: []host.Rule{
		{Prefix: "800", App: "ivr"},
		{Prefix: "49", OPC: 1, App: "pbx"},
		{Prefix: "7", App: "fax"},
	}}})
	caller := a.dial(t, "tcp", client.Config{})
	ivr := b.dial(t, "tcp", client.Config{App: "ivr", Incoming: true})
	pbx := b.dial(t, "unix", client.Config{App: "pbx", Incoming: true})
	ivrRel, pbxRel := ivr.answerer(), pbx.answerer()
	for _, tc := range []struct {
		called string
		rel    <-chan *client.Released
	}{{"800123", ivrRel}, {"4930123", pbxRel}, {"8001", ivrRel}} {
		s := caller.call(2, tc.called)
		if err := caller.Release(ctx10(t), s.Call, 0, 0); err != nil {
			t.Fatal(err)
		}
		next[*client.Released](caller)
		if r := <-tc.rel; r == nil || !r.Remote {
			t.Fatalf("%s: %+v", tc.called, r)
		}
	}
	refused := func(called string, cause uint8) {
		t.Helper()
		s, err := caller.Outseize(ctx10(t), client.Outseize{DPC: 2, Called: called})
		if err != nil {
			t.Fatal(err)
		}
		if r := next[*client.Released](caller); r.Call != s.Call || !r.Remote || r.Cause != cause {
			t.Fatalf("%s: %+v, want cause %d", called, r, cause)
		}
	}
	refused("555", 1)     // no rule
	refused("4830123", 1) // the pbx rule wants 49
	refused("7123", 27)   // the fax rule matches, but no fax host is connected
	a.waitIdle(t)
	b.waitIdle(t)
	if m := b.srv.Metrics(); m.IncomingUnrouted != 3 || m.IncomingOffered != 3 {
		t.Errorf("metrics: %+v", m)
	}
}

// The stdlib-only Python example places a call through a gateway and prints
// every message.
func TestPythonExample(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the Python example is not run")
	}
	a, b := startPair(t, pairOpts{})
	b.dial(t, "tcp", client.Config{Incoming: true}).answerer()
	for _, args := range [][]string{{"--tcp", a.tcp}, {"--unix", a.unix}} {
		cmd := exec.Command(py, append([]string{"../examples/python/place_call.py", "--token", token, "--dpc", "2", "--called", "4930123456", "--calling", "4930999"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		text := string(out)
		for _, want := range []string{`<< {"type":"ack","seq":1`, `<< {"type":"ack","seq":2`, `"type":"progress"`, `"message":"ACM"`, `"type":"answered"`, `>> {"type":"release"`, `"type":"released"`} {
			if !strings.Contains(text, want) {
				t.Errorf("%v: output lacks %s:\n%s", args, want, text)
			}
		}
	}
	a.waitIdle(t)
	b.waitIdle(t)
}

// The Go example program places a call through a gateway and exits 0 once
// the answered call is released.
func TestGoExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example program")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go not on PATH: %v", err)
	}
	a, b := startPair(t, pairOpts{})
	b.dial(t, "unix", client.Config{Incoming: true}).answerer()
	cmd := exec.Command(goBin, "run", "../examples/go/placecall", "-network", "unix", "-addr", a.unix, "-token", token, "-dpc", "2", "-called", "4930123456")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"seized: call", "*client.Progress", "*client.Answered", "*client.Released"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	a.waitIdle(t)
	b.waitIdle(t)
}
