package gateway

import (
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/sprc"
)

// TestAdmissionEndToEnd: with the adaptive admission held at a limit of 3
// calls in set-up, a fourth outseize while B's host has not alerted any call
// is refused with 0x0C and no IAM reaches B; once B alerts one (ACM), a new
// call is admitted.
func TestAdmissionEndToEnd(t *testing.T) {
	cfgA := sprc.Config{CodeYellow: sprc.CodeYellowConfig{Enabled: false},
		Admission: sprc.AdmissionConfig{Enabled: true, InitialLimit: 3, MinLimit: 3, MaxLimit: 3}}
	a, b := startPairWith(t, []Option{WithCongestionControl(cfgA, nil, nil)}, nil)
	called, _ := isup.NewCalledPartyNumber(isup.NAINational, isup.NPIISDN, "4930123456")
	before := inspect(t, b).Stats.Received[isup.IAM]
	for i := range uint64(3) {
		a.Stack.Submit(stack.Outseize{Tag: i + 1, DPC: 2, Called: called})
		if r := a.result(t, i+1); r.Status != stack.StatusOK {
			t.Fatalf("outseize %d: %s", i+1, r.Status)
		}
	}
	a.Stack.Submit(stack.Outseize{Tag: 10, DPC: 2, Called: called})
	if r := a.result(t, 10); r.Status != stack.StatusOutboundCongestion {
		t.Fatalf("fourth call in set-up: %s, want outbound congestion (0x0C)", r.Status)
	}
	if s := a.Control.Snapshot(); s.Refused[sprc.RefuseAdmission] != 1 || s.Admission.InSetup != 3 {
		t.Fatalf("admission refusals %d, in set-up %d; want 1 and 3", s.Refused[sprc.RefuseAdmission], s.Admission.InSetup)
	}
	// B alerts one call: its ACM ends that call's set-up at A.
	var in stack.Incoming
	waitFor(t, "an incoming call at B", func() (bool, bool) {
		select {
		case e := <-b.events:
			var ok bool
			in, ok = e.(stack.Incoming)
			return ok, ok
		case <-time.After(10 * time.Millisecond):
			return false, false
		}
	})
	b.Stack.Submit(stack.Alert{Call: in.Call})
	waitFor(t, "A to see the ACM", func() (int, bool) {
		n := a.Control.Snapshot().Admission.InSetup
		return n, n == 2
	})
	a.Stack.Submit(stack.Outseize{Tag: 11, DPC: 2, Called: called})
	if r := a.result(t, 11); r.Status != stack.StatusOK {
		t.Fatalf("after an ACM: %s, want admitted", r.Status)
	}
	got := waitFor(t, "the fourth IAM at B", func() (uint64, bool) {
		n := inspect(t, b).Stats.Received[isup.IAM] - before
		return n, n >= 4
	})
	if got != 4 {
		t.Fatalf("B received %d IAMs, want 4 (the refused call sent none)", got)
	}
}
