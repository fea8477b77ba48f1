package sprc

import (
	"testing"
	"time"
)

// BenchmarkAdmissionCall is the controller's bookkeeping for one admitted
// outgoing call: the checks, the start (IAM sent), the backward message and
// the end, with the adaptive admission off and on, and with inFlight calls
// in set-up at once as under load (go test ./sprc -run '^$' -bench
// AdmissionCall -benchmem).
func BenchmarkAdmissionCall(b *testing.B) {
	const inFlight = 2000
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			c, err := New(Config{Admission: AdmissionConfig{Enabled: on, InitialLimit: 2 * inFlight, MaxLimit: 2 * inFlight}}, time.Now, Actions{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			id := uint64(0)
			for range inFlight {
				id++
				c.OutgoingCallStarted(2, id)
			}
			for b.Loop() {
				id++
				if admitEdge(c, 2) != Admit || c.AdmitOutgoing(2) != Admit {
					b.Fatal("refused")
				}
				c.OutgoingCallStarted(2, id)
				c.BackwardFor(2, id-inFlight, 10*time.Millisecond, 0)
				c.CallEndedFor(2, true, false, id-inFlight)
			}
		})
	}
}
