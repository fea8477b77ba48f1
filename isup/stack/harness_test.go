package stack

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/mtp"
)

// harness drives a core with a fake clock and records what it sends and emits.
type harness struct {
	t      testing.TB
	c      *core
	now    time.Time
	sent   []sentMsg
	events []Event
}

type sentMsg struct {
	lbl mtp.Label
	msg isup.Message
}

const ownPC, peerPC mtp.PointCode = 1, 2

// fromPeer is the routing label of what the peer sends.
var fromPeer = mtp.Label{OPC: peerPC, DPC: ownPC, SI: 5, NI: 2}

func testConfig(v isup.Variant) Config {
	return Config{OPC: ownPC, NI: 2, Groups: []Group{{Name: "b", DPC: peerPC, Variant: v, CICs: []CICRange{{First: 1, Last: 31}}}}}
}

func newHarness(t testing.TB, cfg Config) *harness {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, now: time.Unix(1_800_000_000, 0)}
	h.c = newCore(cfg, h.now, h.out, func(e Event) { h.events = append(h.events, e) })
	return h
}

func (h *harness) out(lbl mtp.Label, payload []byte) {
	p := h.c.peerByPC[lbl.DPC]
	b := append([]byte(nil), payload...)
	m, err := isup.Decode(b, h.c.variant(p))
	if err != nil {
		h.t.Fatalf("the stack sent an undecodable message % X: %v", payload, err)
	}
	h.sent = append(h.sent, sentMsg{lbl, m})
}

// recv delivers a message from the peer.
func (h *harness) recv(m isup.Message) {
	h.t.Helper()
	p := h.c.peerByPC[peerPC]
	b, err := isup.Marshal(m, h.c.variant(p))
	if err != nil {
		h.t.Fatal(err)
	}
	h.c.receive(fromPeer, b)
}

func (h *harness) advance(d time.Duration) {
	h.now = h.now.Add(d)
	h.c.advance(h.now)
}

// takeSent returns and forgets the messages sent so far.
func (h *harness) takeSent() []isup.Message {
	var out []isup.Message
	for _, s := range h.sent {
		out = append(out, s.msg)
	}
	h.sent = nil
	return out
}

func (h *harness) takeEvents() []Event {
	e := h.events
	h.events = nil
	return e
}

func types(ms []isup.Message) string {
	var s []string
	for _, m := range ms {
		s = append(s, fmt.Sprintf("%s:%d", m.MessageType(), m.CircuitID()))
	}
	return strings.Join(s, " ")
}

// expectSent checks the messages sent since the last check, as "TYPE:CIC ...".
func (h *harness) expectSent(want string) []isup.Message {
	h.t.Helper()
	got := h.takeSent()
	if types(got) != want {
		h.t.Fatalf("sent %q, want %q", types(got), want)
	}
	return got
}

func eventNames(es []Event) string {
	var s []string
	for _, e := range es {
		switch x := e.(type) {
		case Result:
			s = append(s, "result:"+x.Status.String())
		case Incoming:
			s = append(s, "incoming")
		case CallProgress:
			s = append(s, "progress:"+x.Message.MessageType().String())
		case Answered:
			s = append(s, "answered")
		case Released:
			s = append(s, fmt.Sprintf("released:%d", x.Cause))
		case Alarm:
			s = append(s, fmt.Sprintf("alarm:%d", x.Kind))
		}
	}
	return strings.Join(s, " ")
}

func (h *harness) expectEvents(want string) []Event {
	h.t.Helper()
	got := h.takeEvents()
	if eventNames(got) != want {
		h.t.Fatalf("events %q, want %q", eventNames(got), want)
	}
	return got
}

func (h *harness) called() isup.CalledPartyNumber { return called() }

// outseize places a call and returns its ID and CIC.
func (h *harness) outseize(r Outseize) (CallID, uint16) {
	h.t.Helper()
	if r.Called.Digits.Len() == 0 {
		r.Called = h.called()
	}
	if r.DPC == 0 && r.Route == "" {
		r.DPC = peerPC
	}
	h.c.request(r)
	es := h.takeEvents()
	if len(es) != 1 {
		h.t.Fatalf("outseize gave %q", eventNames(es))
	}
	res := es[0].(Result)
	if res.Status != StatusOK {
		h.t.Fatalf("outseize refused: %s %s", res.Status, res.Detail)
	}
	return res.Call, res.CIC
}

func (h *harness) iam(cic uint16) *isup.InitialAddress {
	m := &isup.InitialAddress{Circuit: isup.Circuit{CIC: cic}, ForwardCall: isup.NewForwardCallIndicators(true, 0, false),
		CallingPartyCategory: isup.CategoryOrdinary, CalledParty: h.called()}
	if h.c.variant(0) == isup.ANSI {
		m.UserServiceInfo = isup.NewUserServiceInformation(isup.ITCSpeech, isup.Layer1MuLaw)
	}
	return m
}

// incoming delivers an IAM and returns the offered call.
func (h *harness) incoming(cic uint16) CallID {
	h.t.Helper()
	h.recv(h.iam(cic))
	es := h.expectEvents("incoming")
	return es[0].(Incoming).Call
}

func (h *harness) idleAndQuiet() {
	h.t.Helper()
	if n := len(h.c.calls); n != 0 {
		h.t.Errorf("%d calls remain", n)
	}
	for i := range h.c.circuits {
		cc := &h.c.circuits[i]
		if cc.state != csIdle || cc.pend != 0 || cc.call != nil {
			h.t.Errorf("CIC %d: %s", cc.cic, cc.describe())
		}
	}
	if n := h.c.pendingTimers(); n != 0 {
		h.t.Errorf("%d timers still running", n)
	}
}

func rel(cic uint16, cause uint8) *isup.Release {
	return &isup.Release{Circuit: isup.Circuit{CIC: cic}, Cause: isup.NewCause(isup.LocationPublicLocal, cause)}
}

func simple(t isup.MessageType, cic uint16) *isup.Simple {
	return &isup.Simple{Kind: t, Circuit: isup.Circuit{CIC: cic}}
}

func rlc(cic uint16) *isup.ReleaseComplete {
	return &isup.ReleaseComplete{Circuit: isup.Circuit{CIC: cic}}
}
