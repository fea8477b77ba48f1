package capture

import (
	"errors"
	"io"
	"os"
	"testing"
)

// TestReadM2PACapture reads the Yate M2PA capture: every User Data message
// with data becomes an MSU with its routing label (point codes 1 and 2, NI
// national), the link status messages and acknowledgements are counted.
func TestReadM2PACapture(t *testing.T) {
	const path = "../../../shared/captures/m2pa_isup_itu.pcap"
	r, err := Open(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("capture %s absent (see ../shared/captures/README.md)", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var msus, isup, iam int
	for {
		m, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.Framing != FramingM2PA || !m.HasLabel || m.PPID != ppidM2PA {
			t.Fatalf("frame %d: %v label %v PPID %d", m.Frame, m.Framing, m.HasLabel, m.PPID)
		}
		msus++
		if m.NI != 2 || !(m.OPC == 1 && m.DPC == 2 || m.OPC == 2 && m.DPC == 1) {
			t.Fatalf("frame %d: NI %d OPC %d DPC %d", m.Frame, m.NI, m.OPC, m.DPC)
		}
		if m.SI == 5 {
			isup++
			if len(m.Payload) > 2 && m.Payload[2] == 0x01 { // IAM after the 2-octet CIC
				iam++
			}
		}
	}
	st := r.Stats()
	// 20 calls each way: 40 IAMs; every call has IAM, ACM, ANM, REL, RLC.
	if iam != 40 || isup < 200 || st.M2PALink == 0 || st.NonM3UA != 0 {
		t.Fatalf("%d MSUs, %d ISUP, %d IAM; stats %+v", msus, isup, iam, st)
	}
}
