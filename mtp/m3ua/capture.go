package m3ua

import (
	"net/netip"
	"time"

	"github.com/isupgw/isupgw/mtp/capture"
)

// WithCapture writes every M3UA message sent and received to w as
// IP/SCTP/M3UA with the association's real addresses and ports (the
// gateway's --pcap option). Errors writing the capture never affect
// traffic; they are counted in Stats.CaptureErrors.
func WithCapture(w *capture.Writer) Option {
	return func(e *Endpoint) {
		prev := e.tap
		e.tap = func(out bool, local, remote netip.AddrPort, stream uint16, b []byte) {
			if prev != nil {
				prev(out, local, remote, stream, b)
			}
			src, dst := local, remote
			if !out {
				src, dst = remote, local
			}
			if err := w.WriteM3UA(time.Now(), src, dst, stream, b); err != nil {
				e.stats.CaptureErrors.Add(1)
			}
		}
	}
}
