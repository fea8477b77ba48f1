package sprc

import (
	"testing"
	"time"
)

// BenchmarkAdmissionCall is the controller's bookkeeping for one admitted
// outgoing call: the checks, the start (IAM sent), the backward message and
// the end, with the adaptive admission off and on (go test ./sprc -run '^$'
// -bench AdmissionCall -benchmem).
func BenchmarkAdmissionCall(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			c, err := New(Config{Admission: AdmissionConfig{Enabled: on}}, time.Now, Actions{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			id := uint64(0)
			for b.Loop() {
				id++
				if admitEdge(c, 2) != Admit || c.AdmitOutgoing(2) != Admit {
					b.Fatal("refused")
				}
				c.OutgoingCallStarted(2, id, 0)
				c.BackwardFor(2, id)
				c.CallEndedFor(2, true, id)
			}
		})
	}
}
