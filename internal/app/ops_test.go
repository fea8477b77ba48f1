package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/internal/lockedbuf"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
)

// Two gateways configured with ITU 3-8-3 point codes: A is 1-10-1 (2129),
// B is 1-10-2 (2130). B's group towards A is outgoing only, so the IAMs A
// sends are refused (cause 44), which B logs.
const yamlA383 = `point_code: 1-10-1
m3ua:
  transport: udp
  listen: 127.0.0.1:2905
  udp_port: %d
  peers: [{name: b, accept_from: 127.0.0.1, point_codes: [1-10-2]}]
circuit_groups: [{name: b, point_code: 1-10-2, cics: ["1-8"]}]
timers: {t22: 300ms}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`

const yamlB383 = `point_code: 1-10-2
m3ua:
  transport: udp
  peers: [{name: a, connect: 127.0.0.1:2905, udp_port: %d, point_codes: [1-10-1]}]
circuit_groups: [{name: a, point_code: 1-10-1, cics: ["1-8"], direction: outgoing}]
timers: {t22: 300ms}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`

// logHas reports whether some line of the log holds every part.
func logHas(log string, parts ...string) bool {
	for _, l := range strings.Split(log, "\n") {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return true
		}
	}
	return false
}

func TestPointCodesShownAndReadAsConfigured(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	udp := freeUDPPort(t)
	logA, logB := &lockedbuf.Buffer{}, &lockedbuf.Buffer{}
	a := startLogged(t, ctx, fmt.Sprintf(yamlA383, udp), logA)
	startLogged(t, ctx, fmt.Sprintf(yamlB383, udp), logB)
	eventually(t, "A's destination available", func() bool {
		st := a.run.Gateway.Status()
		return len(st.Destinations) == 1 && st.Destinations[0].Available && st.Circuits["idle"] == 8
	})

	// /status and `isupgw status`.
	st, _, err := FetchFullStatus(a.run.MetricsAddr.String())
	if err != nil {
		t.Fatal(err)
	}
	if st.PC != "1-10-1" || st.PointCodeFormat != "3-8-3" || st.PointCode != 2129 || st.Destinations[0].PC != "1-10-2" || st.Destinations[0].PointCode != 2130 {
		t.Errorf("status: pc %q format %q number %d, destination %+v", st.PC, st.PointCodeFormat, st.PointCode, st.Destinations[0])
	}
	if st.Transport != "udp" {
		t.Errorf("status: transport %q, want udp (configured)", st.Transport)
	}
	var printed strings.Builder
	PrintStatus(&printed, st.Status)
	if !strings.Contains(printed.String(), "isupgw point code 1-10-1,") || !strings.Contains(printed.String(), "b            1-10-2") {
		t.Errorf("isupgw status output:\n%s", printed.String())
	}
	// Metrics labels.
	m := metricsText(t, a)
	for _, want := range []string{
		`isupgw_group_circuits{dpc="1-10-2",group="b",state="idle"} 8`,
		`isupgw_destination_available{dpc="1-10-2",group="b"} 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	// A log line.
	if !logHas(logA.String(), `"message":"isupgw running"`, `"point_code":"1-10-1"`, `"point_code_format":"3-8-3"`) {
		t.Errorf("the start line lacks the point code as configured:\n%s", logA.String())
	}

	// The host API takes the dashed form; a malformed one is bad_value, an
	// unknown one unknown_destination, both saying which.
	host := dial(t, a, false)
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	tracer := dial(t, a, false)
	if err := tracer.Trace(rctx, client.TraceFilter{DPC: "1-10-2"}); err != nil {
		t.Fatalf("trace --dpc 1-10-2: %v", err)
	}
	msg, err := host.Do(rctx, map[string]any{"type": "outseize", "dpc": "1-10-2", "called": "4930123456"})
	if err != nil {
		t.Fatalf("outseize with dpc 1-10-2: %v", err)
	}
	if msg.Type != wire.TypeAck || msg.Call == 0 {
		t.Fatalf("outseize answer %+v", msg)
	}
	// The trace writes the codes so too.
	var sawHost, sawIAM bool
	for deadline := time.After(10 * time.Second); !sawHost || !sawIAM; {
		select {
		case e := <-tracer.Events():
			if l, ok := client.TraceText(e); ok {
				sawHost = sawHost || strings.Contains(l, "outseize dpc=1-10-2 called=4930123456")
				sawIAM = sawIAM || strings.Contains(l, " 1-10-1>1-10-2 sls=") && strings.Contains(l, " IAM")
			}
		case <-deadline:
			t.Fatalf("trace lines: host request %v, IAM %v", sawHost, sawIAM)
		}
	}
	for _, c := range []struct {
		dpc    any
		status wire.Status
		detail string
	}{
		{"1-300-2", wire.StatusBadValue, `field "dpc": "1-300-2": part "300" does not fit 8 bits (3-8-3)`},
		{"2-100", wire.StatusBadValue, `field "dpc": "2-100" is not a point code`},
		{true, wire.StatusBadValue, `field "dpc"`},
		{"1-11-2", wire.StatusUnknownDestination, "no circuit group towards point code 1-11-2"},
	} {
		_, err := host.Do(rctx, map[string]any{"type": "outseize", "dpc": c.dpc, "called": "4930123456"})
		var nak *client.Nak
		if !errors.As(err, &nak) || nak.Status != c.status || !strings.Contains(nak.Detail, c.detail) {
			t.Errorf("dpc %v: %v, want nak 0x%04X with %q", c.dpc, err, uint16(c.status), c.detail)
		}
	}
	// The maintenance and circuits requests read it too.
	msg, err = host.Do(rctx, map[string]any{"type": wire.TypeCircuits, "dpc": "1-10-2", "summary": true})
	if err != nil {
		t.Fatalf("circuits with dpc 1-10-2: %v", err)
	}
	if groups, _ := msg.Data["groups"].([]any); len(groups) != 1 || groups[0].(map[string]any)["pc"] != "1-10-2" {
		t.Errorf("circuits answer %v", msg.Data)
	}
	_, err = host.Do(rctx, map[string]any{"type": wire.TypeBlock, "dpc": "8-10-2", "cic": 1})
	var nak *client.Nak
	if !errors.As(err, &nak) || nak.Status != wire.StatusBadValue || !strings.Contains(nak.Detail, `part "8" does not fit 3 bits`) {
		t.Errorf("block with dpc 8-10-2: %v", err)
	}

	// B refused the IAM (its group towards A is outgoing only) and says so.
	deadline := time.Now().Add(10 * time.Second)
	for !logHas(logB.String(), `"level":"warn"`, `"message":"incoming IAM refused"`, `"opc":"1-10-1"`, `"cause":44`,
		`"reason":"circuit group a is outgoing only"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no line for the refused IAM in B's log:\n%s", logB.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// And B's MTP resume of A, field and text.
	if !logHas(logB.String(), `"pc":"1-10-1"`, `resume pc=1-10-1/0 via a`) {
		t.Errorf("B's log lacks the resume of 1-10-1:\n%s", logB.String())
	}
}

// The refused-IAM line: one a second per reason, with the count left out.
func TestIAMRefusalLogIsRateLimitedPerReason(t *testing.T) {
	var b bytes.Buffer
	now := time.Unix(1000, 0)
	l := newIAMRefusalLog(zerolog.New(&b), mtp.PointCodeFormat{Dashed: true}, func() time.Time { return now })
	congested := stack.RefusedIAM{OPC: 2129, CIC: 5, Cause: 42, Reason: "inbound congestion or Code Yellow"}
	for i := 0; i < 5; i++ {
		l.refused(congested)
	}
	l.refused(stack.RefusedIAM{OPC: 2129, CIC: 6, Reason: "shed at the edge: inbound congestion level 2 (IAM dropped unread, no REL)"})
	now = now.Add(time.Second)
	l.refused(congested)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), b.String())
	}
	for i, want := range [][]string{
		{`"level":"warn"`, `"opc":"1-10-1"`, `"cic":5`, `"cause":42`, `"reason":"inbound congestion or Code Yellow"`, `"suppressed":0`, `"message":"incoming IAM refused"`},
		{`"cic":6`, `"reason":"shed at the edge`, `"suppressed":0`},
		{`"cic":5`, `"suppressed":4`},
	} {
		if !logHas(lines[i], want...) {
			t.Errorf("line %d %s lacks %v", i, lines[i], want)
		}
	}
	if strings.Contains(lines[1], `"cause"`) {
		t.Errorf("an IAM dropped without a REL has no cause: %s", lines[1])
	}
}

// silentUDPPort is a UDP port nothing listens on: B configured to dial
// there has the wrong address.
func silentUDPPort(t *testing.T) int {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}

// A peer at a wrong address: the warn line names the address and the
// reason, alarm 0x1B reaches the hosts, the reconnect counter climbs; a
// reload that changes more of the m3ua section than addresses is refused
// and changes nothing; the address fixed and SIGHUP: the association comes
// up at the new address and the alarm clears, on the same host connection.
func TestWrongPeerAddressAlarmsUntilFixedAndReloaded(t *testing.T) {
	grace, every, poll := associationGrace, associationWarnEvery, associationPoll
	associationGrace, associationWarnEvery, associationPoll = 300*time.Millisecond, time.Hour, 50*time.Millisecond
	t.Cleanup(func() { associationGrace, associationWarnEvery, associationPoll = grace, every, poll })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	udp, wrong := freeUDPPort(t), silentUDPPort(t)
	a := start(t, ctx, fmt.Sprintf(yamlA, udp, "10s"))
	logB := &lockedbuf.Buffer{}
	b := startLogged(t, ctx, fmt.Sprintf(yamlB, wrong), logB)
	host, err := client.Dial(context.Background(), "tcp", b.run.Host.TCPAddr().String(), client.Config{App: "ops", Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	alarm := func(cleared bool) *client.Alarm { return waitAssociationAlarm(t, host, cleared, logB) }
	wrongAddr := fmt.Sprintf("127.0.0.1:%d", wrong)
	raised := alarm(false)
	if raised.Data["address"] != wrongAddr || raised.Data["reason"] == "" {
		t.Errorf("alarm data %v, want address %s and a reason", raised.Data, wrongAddr)
	}
	eventually(t, "the warn line with the wrong address", func() bool {
		return logHas(logB.String(), `"level":"warn"`, "association not up", `"address":"`+wrongAddr+`"`, `"reason":`)
	})
	eventually(t, "reconnects counted while it never came up", func() bool {
		return b.run.Gateway.Endpoint.Stats().Reconnects.Load() >= 1
	})

	// A reload that also changes the peer's point codes is refused: m3ua
	// stays as it was (still dialling the wrong address), and the log says so.
	refusedYAML := strings.Replace(fmt.Sprintf(yamlB, udp), "point_codes: [1]", "point_codes: [1, 5]", 1)
	if err := os.WriteFile(b.path, []byte(refusedYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	b.sigs <- syscall.SIGHUP
	eventually(t, "the refusal logged", func() bool {
		return logHas(logB.String(), `"level":"error"`, "m3ua kept as it was") &&
			logHas(logB.String(), `"not_reloaded":["m3ua (only the peers' connect addresses and udp_port change live)"]`)
	})
	if got := b.run.Gateway.Endpoint.Peer("a").DialAddress().String(); got != wrongAddr {
		t.Fatalf("after the refused reload B dials %s, want still %s", got, wrongAddr)
	}

	// Fixed: the right address, and nothing else changed.
	if err := os.WriteFile(b.path, []byte(fmt.Sprintf(yamlB, udp)), 0o644); err != nil {
		t.Fatal(err)
	}
	b.sigs <- syscall.SIGHUP
	cleared := alarm(true)
	rightAddr := fmt.Sprintf("127.0.0.1:%d", udp)
	if cleared.Data["address"] != rightAddr {
		t.Errorf("cleared alarm data %v, want address %s", cleared.Data, rightAddr)
	}
	if !logHas(logB.String(), "reload: peer address changed", `"association":"a"`, `"from":"`+wrongAddr+`"`, `"to":"`+rightAddr+`"`) {
		t.Errorf("no line for the address change:\n%s", logB.String())
	}
	if !logHas(logB.String(), `"reloaded":[`, `"m3ua peer a address"`) {
		t.Errorf("the reload line does not list the m3ua change:\n%s", logB.String())
	}
	eventually(t, "B's status without alarms, association active", func() bool {
		st, _, err := FetchFullStatus(b.run.MetricsAddr.String())
		return err == nil && len(st.Alarms) == 0 && len(DownAssociations(st)) == 0
	})
	eventually(t, "A's destination available", func() bool {
		st := a.run.Gateway.Status()
		return len(st.Destinations) == 1 && st.Destinations[0].Available
	})
	// The reload replaced only the peer's address: B's congestion settings
	// and circuits are as they were.
	if st := b.run.Gateway.Status(); st.Circuits["idle"] != 8 {
		t.Errorf("B's circuits after the reload: %v", st.Circuits)
	}
	if !strings.Contains(metricsText(t, b), `isupgw_m3ua_errors_total{kind="reconnect"}`) {
		t.Error("no reconnect series")
	}
}
