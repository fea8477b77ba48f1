package stack

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
)

// maintain runs a Maintain request on the harness's core and returns a
// function that reports its outcome so far (nil while it waits).
func (h *harness) maintain(r Maintenance) func() *MaintenanceOutcome {
	h.t.Helper()
	if r.DPC == 0 && r.Route == "" {
		r.DPC = peerPC
	}
	var got *MaintenanceOutcome
	n := 0
	h.c.maintain(r, func(o MaintenanceOutcome) { n++; got = &o })
	return func() *MaintenanceOutcome {
		h.t.Helper()
		if n > 1 {
			h.t.Fatalf("done called %d times", n)
		}
		return got
	}
}

func TestMaintainBlockAnsweredByBLA(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	out := h.maintain(Maintenance{Op: OpBlock, CIC: 5})
	h.expectSent("BLO:5")
	h.expectEvents("") // the request's own Result does not leak to the sink
	h.advance(time.Second)
	if o := out(); o != nil {
		t.Fatalf("answered before the BLA: %+v", *o)
	}
	h.recv(simple(isup.BLA, 5))
	h.advance(0)
	o := out()
	if o == nil || o.Status != StatusOK || o.Sent != isup.BLO || o.Ack != isup.BLA || o.Waited != time.Second {
		t.Fatalf("outcome %+v, want OK BLO/BLA after 1s", o)
	}
	list, _ := h.c.listCircuits(CircuitFilter{First: 5})
	if len(list) != 1 || !list[0].LocalMaint || len(list[0].Awaiting) != 0 {
		t.Fatalf("CIC 5 listed as %+v, want locally blocked, awaiting nothing", list)
	}
}

func TestMaintainUnansweredEndsAtRepeatTimer(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	out := h.maintain(Maintenance{Op: OpBlock, CIC: 7})
	h.expectSent("BLO:7")
	h.advance(DefaultTimers.T12 - time.Millisecond)
	if o := out(); o != nil {
		t.Fatalf("answered before T12: %+v", *o)
	}
	h.advance(time.Millisecond)
	o := out()
	if o == nil || o.Status != StatusNotAcknowledged || !strings.Contains(o.Detail, "T12") {
		t.Fatalf("outcome %+v, want not acknowledged at T12", o)
	}
	h.expectSent("BLO:7") // the procedure goes on (Q.764 §2.9.2: repeat at T12)
	list, _ := h.c.listCircuits(CircuitFilter{First: 7})
	if !list[0].LocalMaint || strings.Join(list[0].Awaiting, ",") != "BLA" {
		t.Fatalf("CIC 7 listed as %+v, want locally blocked awaiting BLA", list[0])
	}
}

func TestMaintainGroupBlockHardwareAndUnblock(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	out := h.maintain(Maintenance{Op: OpBlock, CIC: 1, Range: 7, Hardware: true})
	m := h.expectSent("CGB:1")[0].(*isup.GroupSupervision)
	if m.Type != isup.HardwareFailureOriented || m.RangeAndStatus.Range != 7 {
		t.Fatalf("CGB type %v range %d", m.Type, m.RangeAndStatus.Range)
	}
	if l, _ := h.c.listCircuits(CircuitFilter{State: "awaiting"}); len(l) != 1 || l[0].Awaiting[0] != "CGBA" {
		t.Fatalf("awaiting: %+v, want CIC 1 awaiting CGBA", l)
	}
	ack := &isup.GroupSupervision{Kind: isup.CGBA, Circuit: isup.Circuit{CIC: 1}, Type: m.Type, RangeAndStatus: m.RangeAndStatus}
	h.recv(ack)
	h.advance(0)
	if o := out(); o == nil || o.Status != StatusOK || o.Ack != isup.CGBA {
		t.Fatalf("outcome %+v, want OK CGBA", o)
	}
	blocked, sums := h.c.listCircuits(CircuitFilter{State: "local"})
	if len(blocked) != 8 || !blocked[0].LocalHW || blocked[7].CIC != 8 {
		t.Fatalf("locally blocked: %d circuits, want CICs 1-8 hardware blocked", len(blocked))
	}
	if len(sums) != 1 || sums[0].LocallyBlocked != 8 || sums[0].Idle != 23 || sums[0].Total != 31 {
		t.Fatalf("summary %+v", sums)
	}
	out = h.maintain(Maintenance{Op: OpUnblock, CIC: 1, Range: 7, Hardware: true})
	m = h.expectSent("CGU:1")[0].(*isup.GroupSupervision)
	h.recv(&isup.GroupSupervision{Kind: isup.CGUA, Circuit: isup.Circuit{CIC: 1}, Type: m.Type, RangeAndStatus: m.RangeAndStatus})
	h.advance(0)
	if o := out(); o == nil || o.Status != StatusOK || o.Ack != isup.CGUA {
		t.Fatalf("outcome %+v, want OK CGUA", o)
	}
	if l, _ := h.c.listCircuits(CircuitFilter{State: "blocked"}); len(l) != 0 {
		t.Fatalf("still blocked: %+v", l)
	}
}

func TestMaintainResetBusyCircuit(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	id, cic := h.outseize(Outseize{})
	h.takeSent()
	out := h.maintain(Maintenance{Op: OpReset, CIC: cic})
	h.expectSent("RSC:" + strconv.Itoa(int(cic)))
	es := h.expectEvents("released:41")
	if r := es[0].(Released); r.Call != id || !r.Remote {
		t.Fatalf("released %+v, want call %d remote", r, id)
	}
	h.recv(rlc(cic))
	h.advance(0)
	if o := out(); o == nil || o.Status != StatusOK || o.Ack != isup.RLC {
		t.Fatalf("outcome %+v, want OK RLC", o)
	}
	h.idleAndQuiet()
}

func TestMaintainGroupResetAndQuery(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	out := h.maintain(Maintenance{Op: OpReset, CIC: 1, Range: 3})
	h.expectSent("GRS:1")
	h.recv(&isup.GroupReset{Kind: isup.GRA, Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.NewRangeAndStatus(3, true)})
	h.advance(0)
	if o := out(); o == nil || o.Status != StatusOK || o.Ack != isup.GRA {
		t.Fatalf("GRS outcome %+v, want OK GRA", o)
	}
	out = h.maintain(Maintenance{Op: OpQuery, CIC: 1, Range: 1})
	h.expectSent("CQM:1")
	states := isup.CircuitStateIndicator{
		isup.NewCircuitState(isup.BlockingLocal, isup.CallStateIdle, 0),
		isup.NewCircuitState(0, isup.CallStateIncomingBusy, 0),
	}
	h.recv(&isup.CircuitQueryResponse{Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 1}, States: states})
	h.advance(0)
	o := out()
	if o == nil || o.Status != StatusOK || len(o.States) != 2 {
		t.Fatalf("CQM outcome %+v, want two states", o)
	}
	if o.States[0].Text != "idle, maintenance blocked locally" || o.States[1].CIC != 2 || o.States[1].Text != "incoming busy" {
		t.Fatalf("states %+v", o.States)
	}
	h.expectEvents("alarm:7") // the query result still reaches the hosts
	// Unanswered: T28 ends the wait.
	out = h.maintain(Maintenance{Op: OpQuery, CIC: 4})
	h.advance(DefaultTimers.T28)
	if o := out(); o == nil || o.Status != StatusNotAcknowledged {
		t.Fatalf("CQM outcome %+v, want not acknowledged at T28", o)
	}
}

func TestMaintainRefusals(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	for _, c := range []struct {
		r    Maintenance
		want Status
	}{
		{Maintenance{Op: OpBlock, DPC: 99, CIC: 1}, StatusUnknownDestination},
		{Maintenance{Op: OpBlock, CIC: 40}, StatusCircuitUnavailable},
		{Maintenance{Op: OpQuery, CIC: 1, Range: 40}, StatusBadRequest},
	} {
		out := h.maintain(c.r)
		if o := out(); o == nil || o.Status != c.want {
			t.Errorf("%+v: outcome %+v, want %s", c.r, o, c.want)
		}
	}
	h.expectEvents("")
	h.expectSent("")
}

func TestCircuitsTimeInState(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	start := h.now
	h.advance(3 * time.Second)
	id, cic := h.outseize(Outseize{})
	h.advance(2 * time.Second)
	l, _ := h.c.listCircuits(CircuitFilter{State: "busy"})
	if len(l) != 1 || l[0].CIC != cic || l[0].Call != id || !l[0].Outgoing || !l[0].Since.Equal(start.Add(3*time.Second)) {
		t.Fatalf("busy circuits %+v, want CIC %d call %d outgoing since +3s", l, cic, id)
	}
	idle, _ := h.c.listCircuits(CircuitFilter{First: cic + 1})
	if !idle[0].Since.Equal(start) {
		t.Fatalf("idle CIC since %v, want the start %v", idle[0].Since, start)
	}
}

func TestMaintainBlockSupersededByUnblock(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	block := h.maintain(Maintenance{Op: OpBlock, CIC: 9})
	unblock := h.maintain(Maintenance{Op: OpUnblock, CIC: 9})
	h.expectSent("BLO:9 UBL:9")
	h.advance(0)
	if o := block(); o == nil || o.Status != StatusInvalidState || !strings.Contains(o.Detail, "superseded") {
		t.Fatalf("block outcome %+v, want superseded", o)
	}
	if o := unblock(); o != nil {
		t.Fatalf("unblock answered before its UBA: %+v", *o)
	}
	h.recv(simple(isup.UBA, 9))
	h.advance(0)
	if o := unblock(); o == nil || o.Status != StatusOK || o.Ack != isup.UBA {
		t.Fatalf("unblock outcome %+v, want OK UBA", o)
	}
}

// Every Circuit State Indicator octet reads as something, and the CQR text
// round-trips through parseQueried.
func TestDescribeEveryCircuitState(t *testing.T) {
	for b := 0; b < 256; b++ {
		if DescribeCircuitState(byte(b)) == "" {
			t.Errorf("0x%02x: no description", b)
		}
		got := parseQueried(fmt.Sprintf("%d:%02x", 100+b, b))
		if len(got) != 1 || got[0].CIC != uint16(100+b) || got[0].Coded != byte(b) {
			t.Errorf("0x%02x: parsed %+v", b, got)
		}
	}
}

func FuzzParseQueried(f *testing.F) {
	f.Add("1:0c 2:0e 3:00")
	f.Add("T28 expired: no answer to CQM")
	f.Fuzz(func(t *testing.T, s string) {
		for _, q := range parseQueried(s) {
			if q.Text == "" {
				t.Fatalf("%q: state without text", s)
			}
		}
	})
}

func TestCircuitsPaging(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	l := h.c.circuitList(CircuitFilter{Offset: 25, Limit: 10})
	if l.Total != 31 || len(l.Rows) != 6 || l.Rows[0].CIC != 26 || l.Rows[5].CIC != 31 {
		t.Fatalf("page at 25: total %d, %d rows from CIC %d", l.Total, len(l.Rows), l.Rows[0].CIC)
	}
	if l := h.c.circuitList(CircuitFilter{Limit: -1}); l.Total != 31 || len(l.Rows) != 0 || len(l.Groups) != 1 || l.Groups[0].Total != 31 {
		t.Fatalf("summary only: %+v", l)
	}
}

// A CGBA acknowledging part of the range leaves the wait on until the rest
// is acknowledged (Q.764 §2.8.3: the missing circuits stay pending).
func TestMaintainPartialGroupAck(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	out := h.maintain(Maintenance{Op: OpBlock, CIC: 1, Range: 7})
	m := h.expectSent("CGB:1")[0].(*isup.GroupSupervision)
	ack := func(bits ...int) {
		rs := isup.NewRangeAndStatus(7, true)
		for _, b := range bits {
			rs.SetBit(b, true)
		}
		h.recv(&isup.GroupSupervision{Kind: isup.CGBA, Circuit: isup.Circuit{CIC: 1}, Type: m.Type, RangeAndStatus: rs})
		h.advance(0)
	}
	ack(0, 1, 2, 3)
	if o := out(); o != nil {
		t.Fatalf("answered after a partial CGBA: %+v", *o)
	}
	ack(4, 5, 6, 7)
	if o := out(); o == nil || o.Status != StatusOK || o.Ack != isup.CGBA {
		t.Fatalf("outcome %+v, want OK once every circuit is acknowledged", o)
	}
}

func TestMaintainTwoQueriesOneAnswer(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	first := h.maintain(Maintenance{Op: OpQuery, CIC: 1})
	second := h.maintain(Maintenance{Op: OpQuery, CIC: 1})
	h.expectSent("CQM:1 CQM:1")
	h.recv(&isup.CircuitQueryResponse{Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 0},
		States: isup.CircuitStateIndicator{isup.NewCircuitState(0, isup.CallStateIdle, 0)}})
	h.advance(0)
	for i, out := range []func() *MaintenanceOutcome{first, second} {
		if o := out(); o == nil || o.Status != StatusOK || len(o.States) != 1 {
			t.Errorf("query %d: %+v, want the CQR", i+1, o)
		}
	}
	if n := len(h.c.maint.waiters); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
}

func TestMaintainWaitersBounded(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	for i := 0; i < maxMaintWaiters; i++ {
		h.maintain(Maintenance{Op: OpBlock, CIC: uint16(1 + i%31)})
	}
	h.takeSent()
	out := h.maintain(Maintenance{Op: OpBlock, CIC: 1})
	if o := out(); o == nil || o.Status != StatusBadRequest {
		t.Fatalf("request %d: %+v, want refused", maxMaintWaiters+1, o)
	}
	h.expectSent("")
}
