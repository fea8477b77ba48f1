package stack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/isupgw/isupgw/isup"
)

func TestTraceShowsOneCallOnly(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	var lines []string
	id := h.c.startTrace(TraceFilter{Called: "4930"}, func(l string) { lines = append(lines, l) })

	// The traced call: outgoing to 4930123456.
	call1, cic1 := h.outseize(Outseize{})
	// Another call: incoming to 5551234.
	other, err := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "5551234")
	if err != nil {
		t.Fatal(err)
	}
	iam := h.iam(2)
	iam.CalledParty = other
	h.recv(iam)
	call2 := h.expectEvents("incoming")[0].(Incoming).Call
	h.c.request(Release{Call: call2, Cause: 16})
	h.recv(rlc(2))
	h.recv(&isup.Answer{Circuit: isup.Circuit{CIC: cic1}})
	h.recv(rel(cic1, 16))
	h.takeEvents()

	text := strings.Join(lines, "\n")
	for _, want := range []string{
		"host>gw call=0 outseize dpc=2 called=4930123456",
		fmt.Sprintf("1>2 sls=%d cic=%d IAM", cic1&0xf, cic1),
		fmt.Sprintf("gw>host call=%d result status=0x0010 ok dpc=2 cic=%d", call1, cic1),
		fmt.Sprintf("2>1 sls=0 cic=%d ANM", cic1),
		fmt.Sprintf("2>1 sls=0 cic=%d REL cause=16", cic1),
		fmt.Sprintf("1>2 sls=%d cic=%d RLC", cic1&0xf, cic1),
		fmt.Sprintf("gw>host call=%d released cause=16", call1),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("trace lacks %q:\n%s", want, text)
		}
	}
	for _, l := range lines {
		if strings.Contains(l, "cic=2 ") || strings.Contains(l, fmt.Sprintf("call=%d ", call2)) || strings.Contains(l, "5551234") {
			t.Errorf("the other call is traced: %s", l)
		}
	}
	h.c.stopTrace(id)
	if h.c.trace != nil {
		t.Fatal("trace still active after its last subscriber left")
	}
	n := len(lines)
	h.outseize(Outseize{})
	if len(lines) != n {
		t.Fatalf("lines after the trace stopped: %v", lines[n:])
	}
}

func TestTraceByCIC(t *testing.T) {
	h := newHarness(t, testConfig(isup.ITU))
	var lines []string
	h.c.startTrace(TraceFilter{DPC: peerPC, CIC: 7}, func(l string) { lines = append(lines, l) })
	h.recv(simple(isup.BLO, 7))
	h.recv(simple(isup.BLO, 8))
	if len(lines) != 2 || !strings.Contains(lines[0], "cic=7 BLO") || !strings.Contains(lines[1], "cic=7 BLA") {
		t.Fatalf("trace of CIC 7: %q", lines)
	}
}

func TestTraceLimit(t *testing.T) {
	s := runStack(t)
	ctx := context.Background()
	for i := range MaxTraces {
		if _, err := s.Trace(ctx, TraceFilter{}, func(string) {}); err != nil {
			t.Fatalf("trace %d: %v", i+1, err)
		}
	}
	if _, err := s.Trace(ctx, TraceFilter{}, func(string) {}); !errors.Is(err, ErrTooManyTraces) {
		t.Fatalf("trace %d: %v, want ErrTooManyTraces", MaxTraces+1, err)
	}
	if err := s.Untrace(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Trace(ctx, TraceFilter{}, func(string) {}); err != nil {
		t.Fatalf("a trace after one ended: %v", err)
	}
	if n, err := s.TraceCount(ctx); err != nil || n != MaxTraces {
		t.Fatalf("TraceCount %d %v, want %d", n, err, MaxTraces)
	}
}
