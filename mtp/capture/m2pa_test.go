package capture

import (
	"errors"
	"io"
	"os"
	"testing"
)

// TestParseM2PA checks the M2PA framings the Reader meets: User Data with an
// MSU, an empty User Data (acknowledgement only, RFC 4165 section 4.2.2) and
// Link Status (counted), and malformed headers (errors, never a panic).
func TestParseM2PA(t *testing.T) {
	hdr := func(ver, class, typ byte, n int) []byte {
		return []byte{ver, 0, class, typ, 0, 0, 0, byte(n), 0, 0xff, 0xff, 0xff, 0, 0, 0, 0}
	}
	msu := []byte{0x85, 2, 0x40, 0, 0x30, 1, 0, 0x10} // SIO, ITU label (DPC 2, OPC 1, SLS 3), CIC 1, RLC
	userData := append(append(hdr(1, 11, 1, 16+1+len(msu)), 0), msu...)
	cases := []struct {
		name    string
		in      []byte
		ok      bool
		err     error
		nonMSU  int
		opc     uint32
		dpc     uint32
		sls, si uint8
	}{
		{"user data", userData, true, nil, 0, 1, 2, 3, 5},
		{"empty user data", hdr(1, 11, 1, 16), false, nil, 1, 0, 0, 0, 0},
		{"link status", append(hdr(1, 11, 2, 20), 0, 0, 0, 1), false, nil, 1, 0, 0, 0, 0},
		{"short header", hdr(1, 11, 1, 16)[:10], false, ErrTruncated, 0, 0, 0, 0, 0},
		{"version 2", hdr(2, 11, 1, 16), false, ErrMalformed, 0, 0, 0, 0, 0},
		{"class 10", hdr(1, 10, 1, 16), false, ErrMalformed, 0, 0, 0, 0, 0},
		{"type 9", hdr(1, 11, 9, 16), false, ErrMalformed, 0, 0, 0, 0, 0},
		{"length below header", hdr(1, 11, 1, 8), false, ErrMalformed, 0, 0, 0, 0, 0},
		{"length past data", hdr(1, 11, 1, 40), false, ErrTruncated, 0, 0, 0, 0, 0},
		{"priority octet only", append(hdr(1, 11, 1, 17), 0), false, ErrTruncated, 0, 0, 0, 0, 0},
		{"label cut", append(hdr(1, 11, 1, 19), 0, 0x85, 2), false, ErrTruncated, 0, 0, 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r Reader
			m, ok, err := r.parseM2PA(c.in)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err %v, want %v", err, c.err)
				}
				return
			}
			if err != nil || ok != c.ok || r.stats.M2PANonMSU != c.nonMSU {
				t.Fatalf("ok %v err %v nonMSU %d", ok, err, r.stats.M2PANonMSU)
			}
			if ok && (m.Framing != FramingM2PA || m.OPC != c.opc || m.DPC != c.dpc || m.SLS != c.sls || m.SI != c.si || len(m.Payload) != 3) {
				t.Fatalf("message %+v", m)
			}
		})
	}
}

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
	if iam != 40 || isup < 200 || st.M2PANonMSU == 0 || st.NonM3UA != 0 {
		t.Fatalf("%d MSUs, %d ISUP, %d IAM; stats %+v", msus, isup, iam, st)
	}
}
