package main

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/internal/app/apptest"
)

const pairYAMLA = `point_code: 1
m3ua:
  transport: udp
  listen: 127.0.0.1:2905
  udp_port: %d
  peers: [{name: b, accept_from: 127.0.0.1, point_codes: [2]}]
circuit_groups: [{name: b, point_code: 2, cics: ["1-8"]}]
timers: {t22: 300ms}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`

const pairYAMLB = `point_code: 2
m3ua:
  transport: udp
  peers: [{name: a, connect: 127.0.0.1:2905, udp_port: %d, point_codes: [1]}]
circuit_groups: [{name: a, point_code: 1, cics: ["1-8"]}]
timers: {t22: 300ms}
host_api: {tcp: "127.0.0.1:0", token: secret}
metrics: 127.0.0.1:0
`

// gw is a gateway run in the test process, as `isupgw run` runs it.
type gw struct {
	*apptest.Gateway
	api string
}

// startTwo runs A (point code 1) and B (2) over M3UA on loopback and waits for
// their start-up resets.
func startTwo(t *testing.T) (a, b *gw) {
	t.Helper()
	udp := apptest.FreeUDPPort(t)
	a = &gw{Gateway: apptest.Start(t, context.Background(), fmt.Sprintf(pairYAMLA, udp))}
	b = &gw{Gateway: apptest.Start(t, context.Background(), fmt.Sprintf(pairYAMLB, udp))}
	for _, g := range []*gw{a, b} {
		g.api = g.HostAddr()
		eventually(t, "destination available and circuits reset", func() bool {
			st := g.Gateway.Gateway.Status()
			return len(st.Destinations) == 1 && st.Destinations[0].Available && st.Circuits["idle"] == 8
		})
	}
	return a, b
}

// eventually polls cond (bounded: 10 s; there is no signal for these states).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// isupgw runs the command line against gateway g and returns its output.
func (g *gw) isupgw(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"isupgw"}, args...)
	full = append(full, "--host-api", g.api, "--token", "secret")
	err := newApp(strings.NewReader(""), &out, &errb).Run(full)
	return out.String(), err
}

func (g *gw) mustIsupgw(t *testing.T, args ...string) string {
	t.Helper()
	out, err := g.isupgw(t, args...)
	if err != nil {
		t.Fatalf("isupgw %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// host connects a host application to g; incoming hosts answer every call.
func (g *gw) host(t *testing.T, answer bool) (*client.Client, chan client.Event) {
	t.Helper()
	c, err := client.Dial(context.Background(), "tcp", g.api, client.Config{App: "test", Token: "secret", Incoming: answer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	events := make(chan client.Event, 256)
	go func() {
		for e := range c.Events() {
			if in, ok := e.(*client.Incoming); ok && answer {
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					_ = c.Alert(ctx, in.Call)
					_ = c.Answer(ctx, in.Call)
				}()
			}
			events <- e
		}
		close(events)
	}()
	return c, events
}

// row finds a CIC's row in `isupgw circuits` output and returns its columns.
func row(t *testing.T, out string, cic int) []string {
	t.Helper()
	cols := regexp.MustCompile(`\s{2,}`) // tabwriter pads with at least two spaces; states have one
	for _, l := range strings.Split(out, "\n") {
		f := cols.Split(strings.TrimSpace(l), -1)
		if len(f) >= 3 && f[2] == fmt.Sprint(cic) {
			return f
		}
	}
	t.Fatalf("no row for CIC %d in:\n%s", cic, out)
	return nil
}

// waitReleased returns the next released event that ok accepts (nil: any).
func waitReleased(t *testing.T, events chan client.Event, ok func(*client.Released) bool) *client.Released {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-events:
			if r, is := e.(*client.Released); is && (ok == nil || ok(r)) {
				return r
			}
		case <-deadline:
			t.Fatal("no released event within 10 s")
		}
	}
}

func TestCircuitMaintenanceBetweenTwoGateways(t *testing.T) {
	a, b := startTwo(t)
	_, eventsA := a.host(t, true)
	hostB, eventsB := b.host(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// Block CICs 1-4 on A: a CGB, answered by B's CGBA.
	out := a.mustIsupgw(t, "circuits", "block", "--dpc", "0-0-2", "--cic", "1-4") // ITU 3-8-3 for point code 2
	if !strings.Contains(out, "CGB sent, CGBA received") {
		t.Fatalf("block output: %s", out)
	}
	listA := a.mustIsupgw(t, "circuits")
	listB := b.mustIsupgw(t, "circuits")
	for cic := 1; cic <= 8; cic++ {
		wantA, wantB := "-", "-"
		if cic <= 4 {
			wantA, wantB = "maintenance", "maintenance"
		}
		if r := row(t, listA, cic); r[4] != wantA || r[5] != "-" {
			t.Errorf("A CIC %d: local %s remote %s, want local %s", cic, r[4], r[5], wantA)
		}
		if r := row(t, listB, cic); r[5] != wantB || r[4] != "-" {
			t.Errorf("B CIC %d: local %s remote %s, want remote %s", cic, r[4], r[5], wantB)
		}
	}
	if !strings.Contains(listA, "group b (dpc 2): 8 circuits: 4 idle, 0 outgoing, 0 incoming, 0 releasing, 4 locally blocked, 0 remotely blocked") {
		t.Errorf("A summary:\n%s", listA)
	}

	// B places four calls to A: none is refused, none takes CICs 1-4.
	var calls []uint64
	for range 4 {
		s, err := hostB.Outseize(ctx, client.Outseize{DPC: 1, Called: "4930123456"})
		if err != nil {
			t.Fatalf("B's call refused with CICs 5-8 free: %v", err)
		}
		if s.CIC <= 4 {
			t.Fatalf("B seized CIC %d, blocked by A", s.CIC)
		}
		calls = append(calls, s.Call)
	}
	if _, err := hostB.Outseize(ctx, client.Outseize{DPC: 1, Called: "4930123456"}); err == nil {
		t.Fatal("a fifth call found a circuit: the blocked ones were seized")
	}
	// B's host is answered once B has sent the IAM; A counts the call
	// when the IAM arrives.
	var busy string
	eventually(t, "A listing the four calls as incoming busy", func() bool {
		busy = a.mustIsupgw(t, "circuits", "--state", "busy")
		return strings.Count(busy, "incoming busy") >= 4
	})
	if n := strings.Count(busy, "incoming busy"); n != 4 {
		t.Errorf("A lists %d incoming busy circuits, want 4:\n%s", n, busy)
	}
	for _, id := range calls {
		if err := hostB.Release(ctx, id, 16, 1); err != nil {
			t.Fatal(err)
		}
		waitReleased(t, eventsA, nil)
	}
	eventually(t, "B idle", func() bool { return b.Gateway.Gateway.Status().Circuits["idle, remotely blocked"] == 4 })

	// Unblock: CGU; B may seize all eight again.
	if out := a.mustIsupgw(t, "circuits", "unblock", "--dpc", "2", "--cic", "1-4"); !strings.Contains(out, "CGU sent, CGUA received") {
		t.Fatalf("unblock output: %s", out)
	}
	if out := b.mustIsupgw(t, "circuits", "--state", "blocked"); strings.Count(out, "\n") != 2 { // header and summary
		t.Fatalf("B still lists blocked circuits:\n%s", out)
	}
	seized := map[uint16]bool{}
	calls = calls[:0]
	for range 8 {
		s, err := hostB.Outseize(ctx, client.Outseize{DPC: 1, Called: "4930123456"})
		if err != nil {
			t.Fatalf("call after unblocking: %v", err)
		}
		seized[s.CIC] = true
		calls = append(calls, s.Call)
	}
	if len(seized) != 8 {
		t.Fatalf("B seized %d distinct CICs, want all 8", len(seized))
	}

	// Reset one busy circuit from A: the call is released on both hosts.
	eventually(t, "A's calls up", func() bool { return a.Gateway.Gateway.Status().Circuits["incoming busy"] == 8 })
	busyA := a.mustIsupgw(t, "circuits", "--cic", "5")
	callA := row(t, busyA, 5)[7]
	if out := a.mustIsupgw(t, "circuits", "reset", "--dpc", "2", "--cic", "5"); !strings.Contains(out, "RSC sent, RLC received") {
		t.Fatalf("reset output: %s", out)
	}
	reset := func(r *client.Released) bool { return r.Remote && r.CIC == 5 }
	relA := waitReleased(t, eventsA, reset)
	if fmt.Sprint(relA.Call) != callA || relA.CIC != 5 || !relA.Remote {
		t.Errorf("A's host got %+v, want call %s on CIC 5", relA, callA)
	}
	relB := waitReleased(t, eventsB, reset)
	if relB.Reason == "" || relB.Cause == 16 {
		t.Errorf("B's host got %+v, want the call on CIC 5 reset by the far end", relB)
	}
	for _, id := range calls {
		if id != relB.Call {
			_ = hostB.Release(ctx, id, 16, 1)
		}
	}
	for _, g := range []*gw{a, b} {
		eventually(t, "idle after the releases", func() bool { return g.Gateway.Gateway.Status().Circuits["idle"] == 8 })
	}

	// Query from A after B blocked CIC 3 (through the host API request itself):
	// the CQR's states agree with both listings.
	if _, err := hostB.Maintain(ctx, "block", client.Maintenance{DPC: "0-0-1", CIC: 3}); err != nil {
		t.Fatalf("block through the host API: %v", err)
	}
	out = a.mustIsupgw(t, "circuits", "query", "--dpc", "2", "--cic", "1-8")
	if !strings.Contains(out, "CQM sent, CQR received") {
		t.Fatalf("query output: %s", out)
	}
	listA, listB = a.mustIsupgw(t, "circuits"), b.mustIsupgw(t, "circuits")
	re := regexp.MustCompile(`CIC (\d+): ([^(]+) \(0x`)
	got := re.FindAllStringSubmatch(out, -1)
	if len(got) != 8 {
		t.Fatalf("query gave %d states:\n%s", len(got), out)
	}
	for _, m := range got {
		var cic int
		fmt.Sscan(m[1], &cic)
		state := strings.TrimSpace(m[2])
		bLocal, aRemote := row(t, listB, cic)[4], row(t, listA, cic)[5]
		want := "idle"
		if bLocal == "maintenance" {
			want = "idle, maintenance blocked locally"
		}
		if state != want {
			t.Errorf("CIC %d: CQR says %q, B lists local %s: want %q", cic, state, bLocal, want)
		}
		if aRemote != bLocal {
			t.Errorf("CIC %d: A lists remote %s, B local %s", cic, aRemote, bLocal)
		}
	}
	if row(t, listB, 3)[4] != "maintenance" {
		t.Errorf("B's CIC 3 not locally blocked:\n%s", listB)
	}
}

func TestCircuitsCommandErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"circuits", "block", "--cic", "1"}, "--dpc or --group"},
		{[]string{"circuits", "block", "--dpc", "2", "--cic", "5-1"}, "first not above last"},
		{[]string{"circuits", "reset", "--dpc", "2", "--cic", "x"}, "want a CIC"},
		{[]string{"circuits", "--host-api", "127.0.0.1:1", "--token", "t"}, "127.0.0.1:1"},
	} {
		var out, errb bytes.Buffer
		err := newApp(strings.NewReader(""), &out, &errb).Run(append([]string{"isupgw"}, c.args...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

func TestStatusHealthyPairExitsZero(t *testing.T) {
	a, _ := startTwo(t)
	var out, errb bytes.Buffer
	err := newApp(strings.NewReader(""), &out, &errb).Run([]string{"isupgw", "status", "--addr", a.MetricsAddr.String()})
	if err != nil {
		t.Fatalf("status of a healthy gateway: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Active alarms: none") {
		t.Errorf("status output:\n%s", out.String())
	}
	err = newApp(strings.NewReader(""), &out, &errb).Run([]string{"isupgw", "circuits", "--host-api", a.api, "--token", "wrong"})
	if err == nil || !strings.Contains(err.Error(), "wrong or missing token") {
		t.Errorf("circuits with a wrong token: %v", err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"circuits", "block", "--dpc", "0-0-9", "--cic", "1"}, "no circuit group of the gateway has point code 0-0-9"},
		{[]string{"circuits", "--dpc", "1-2"}, "not a point code"},
		{[]string{"trace", "--dpc", "x-1-1"}, `"x-1-1" is not a point code`},
	} {
		if _, err := a.isupgw(t, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	sum := a.mustIsupgw(t, "circuits", "--summary", "--dpc", "0-0-2")
	if strings.Contains(sum, "GROUP") || !strings.Contains(sum, "group b (dpc 2): 8 circuits: 8 idle") {
		t.Errorf("summary output:\n%s", sum)
	}
}
