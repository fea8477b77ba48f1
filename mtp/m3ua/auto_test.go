package m3ua

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	"github.com/isupgw/isupgw/mtp/transport"
	"github.com/rs/zerolog"
)

// TestAutoTransportIsLogged: with transport auto the endpoint logs which
// transport it chose and why (udp here, where the kernel has no SCTP).
func TestAutoTransportIsLogged(t *testing.T) {
	var buf bytes.Buffer
	start(t, Config{Role: RoleSG, Transport: transport.KindAuto, Listen: netip.AddrPortFrom(lo, 0),
		Peers: []Peer{{Name: "asp", From: lo}}}, WithLogger(zerolog.New(&buf)))
	want, _ := transport.Resolve(transport.KindAuto)
	log := buf.String()
	if !strings.Contains(log, `"transport":"`+want.String()+`"`) || !strings.Contains(log, `"why":`) {
		t.Fatalf("log %q does not name transport %s and why", log, want)
	}
}
