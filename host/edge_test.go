package host_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/sprc"
)

// A host that floods outseizes the adaptive admission refuses at the edge
// gets a nak 0x0C for every one, in order and with its seq, with no tag or
// pending entry behind it: it stays connected (its naks count in its share
// until written, so the reader is paced and its send queue never fills), the
// refusals are counted by the admission and in the host API's naks, and the
// gateway still answers its next request.
func TestEdgeRefusalFlood(t *testing.T) {
	control := sprc.Config{Admission: sprc.AdmissionConfig{Enabled: true, InitialLimit: 1, MinLimit: 1, MaxLimit: 1}}
	a, _ := startPair(t, pairOpts{controlA: &control})
	a.g.Control.OutgoingCallStarted(2, 1) // one call in set-up: the limit is reached
	r := a.raw(t, "tcp", nil)
	if m := r.roundTrip(`{"type":"hello","seq":0,"version":1,"token":"` + token + `"}`); m.Type != wire.TypeAck {
		t.Fatalf("hello: %+v", m)
	}
	const n = 20000 // many times the host's share (256) and its send queue (1024)
	before := a.srv.Metrics()
	var flood strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&flood, `{"type":"outseize","seq":%d,"dpc":2,"called":"4930123456"}`+"\n", i)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := r.nc.Write([]byte(flood.String()))
		errc <- err
	}()
	// The admission's level alarm (0x16) may be raised or cleared at any
	// moment of the flood, also after its last nak: answers skip alarms.
	recvAnswer := func() (wire.Message, string) {
		for {
			if m, line := r.recv(); m.Type != wire.TypeAlarm && m.Type != wire.TypeAlarmCleared {
				return m, line
			}
		}
	}
	for seq := uint64(1); seq <= n; {
		m, line := recvAnswer()
		if m.Type != wire.TypeNak || m.Seq == nil || *m.Seq != seq || m.Status != wire.StatusOutboundCongestion || m.Name != wire.StatusOutboundCongestion.Name() {
			t.Fatalf("answer %d: %s", seq, line)
		}
		seq++
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	r.send(`{"type":"status","seq":99}`)
	if m, line := recvAnswer(); m.Type != wire.TypeAck || m.Seq == nil || *m.Seq != 99 {
		t.Fatalf("status after the flood: %s", line)
	}
	after := a.srv.Metrics()
	if after.QueueDrops != before.QueueDrops || len(after.Disconnects) != len(before.Disconnects) {
		t.Fatalf("the flood cost a disconnect: drops %d, disconnects %v", after.QueueDrops, after.Disconnects)
	}
	share := after.ShareRefused - before.ShareRefused
	naks := after.Naks[uint16(wire.StatusOutboundCongestion)] - before.Naks[uint16(wire.StatusOutboundCongestion)]
	edge := a.g.Control.Snapshot().Refused[sprc.RefuseAdmission]
	if naks != n || edge+share != n {
		t.Fatalf("naks 0x0C counted %d, refused by the admission %d and for the share %d, want %d in all", naks, edge, share, n)
	}
}
