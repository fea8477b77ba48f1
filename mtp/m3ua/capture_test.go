package m3ua

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/capture"
	"github.com/isupgw/isupgw/mtp/transport"
)

// TestCaptureDecodesInTshark: an ASP with the capture option exchanges
// DATA carrying ISUP with an SG; tshark (not ours) decodes the file with a
// good CRC32c on every SCTP packet, every DATA message's OPC, DPC, SI and
// SLS as sent, and the payload as ISUP with the right CIC.
func TestCaptureDecodesInTshark(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed (Debian package tshark)")
	}
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	sg, asp := sgAndASP(t, transport.KindUDP, WithCapture(w))
	type sent struct {
		opc, dpc mtp.PointCode
		si, sls  uint8
		cic      uint16
	}
	var want []sent
	for i := 0; i < 40; i++ {
		cic := uint16(100 + i)
		// ISUP RLC (0x10) with no optional part: CIC, type, pointer 0.
		payload := []byte{byte(cic), byte(cic >> 8), 0x10, 0x00}
		m := &mtp.Message{Label: mtp.Label{OPC: 2, DPC: 1, SI: mtp.SIISUP, NI: 2, SLS: uint8(i % 16)}, Payload: payload}
		if err := asp.Transfer(m); err != nil {
			t.Fatal(err)
		}
		want = append(want, sent{2, 1, 5, uint8(i % 16), cic})
		<-sg.Indications()
	}
	// Answer from the SG so both directions appear.
	if err := sg.Transfer(&mtp.Message{Label: mtp.Label{OPC: 1, DPC: 2, SI: 5, NI: 2, SLS: 3}, Payload: []byte{7, 0, 0x10, 0}}); err != nil {
		t.Fatal(err)
	}
	<-asp.Indications()
	want = append(want, sent{1, 2, 5, 3, 7})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_ = asp.Close(ctx)
	if asp.Stats().CaptureErrors.Load() != 0 {
		t.Fatal("capture errors")
	}
	path := filepath.Join(t.TempDir(), "m3ua.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tshark, "-r", path, "-o", "sctp.checksum:CRC-32C", "-Y", "m3ua.message_class == 1",
		"-T", "fields", "-E", "occurrence=f", "-e", "sctp.checksum.status", "-e", "m3ua.protocol_data_opc",
		"-e", "m3ua.protocol_data_dpc", "-e", "m3ua.protocol_data_si", "-e", "m3ua.protocol_data_sls",
		"-e", "isup.cic").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(want) {
		t.Fatalf("tshark shows %d DATA messages, sent %d:\n%s", len(lines), len(want), out)
	}
	for i, l := range lines {
		w := want[i]
		exp := fmt.Sprintf("1\t%d\t%d\t%d\t%d\t%d", w.opc, w.dpc, w.si, w.sls, w.cic)
		if l != exp {
			t.Fatalf("message %d: tshark %q, want %q", i, l, exp)
		}
	}
	// Management traffic is in the file too (ASP Up .. ASP Down).
	mgmt, err := exec.Command(tshark, "-r", path, "-Y", "m3ua.message_class == 3", "-T", "fields", "-e", "m3ua.message_type").Output()
	if err != nil || !strings.Contains(string(mgmt), "1") || !strings.Contains(string(mgmt), "2") {
		t.Fatalf("ASPSM in capture: %q %v", mgmt, err)
	}
}
