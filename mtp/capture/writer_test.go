package capture

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wmnsk/go-m3ua/messages"
	"github.com/wmnsk/go-m3ua/messages/params"
)

// iamCIC1 is an ITU IAM for CIC 1 (Q.763), as the M3UA user data.
var iamCIC1 = mustHex("01 00 01 00 60 01 0a 00 02 07 05 83 10 21 43 05 0a 07 03 11 21 43 65 87 09 00")

// Short ISUP messages for CIC 2..4: ACM, ANM, REL (cause 16), RLC.
var (
	acmCIC2 = mustHex("02 00 06 14 04 00")
	anmCIC2 = mustHex("02 00 09 00")
	relCIC3 = mustHex("03 00 0c 02 00 02 80 90")
	rlcCIC4 = mustHex("04 00 10 00")
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func marshal(t *testing.T, m interface{ MarshalBinary() ([]byte, error) }) []byte {
	t.Helper()
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type wantISUP struct {
	opc, dpc uint32
	sls      uint8
	payload  []byte
	msgType  int
	cic      int
}

var isupSamples = []wantISUP{
	{1001, 2002, 1, iamCIC1, 1, 1},
	{2002, 1001, 2, acmCIC2, 6, 2},
	{2002, 1001, 2, anmCIC2, 9, 2},
	{1001, 2002, 3, relCIC3, 12, 3},
	{2002, 1001, 4, rlcCIC4, 16, 4},
}

// writeSampleM3UA writes ASPUP, the ISUP DATA messages (alternating
// directions), DUNA and SCON; it returns the file's bytes and what was sent.
func writeSampleM3UA(t *testing.T, a, b netip.AddrPort, opts ...Option) ([]byte, [][]byte) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	var sent [][]byte
	put := func(src, dst netip.AddrPort, stream uint16, m []byte) {
		t.Helper()
		if err := w.WriteM3UA(ts, src, dst, stream, m); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, m)
		ts = ts.Add(time.Millisecond)
	}
	put(a, b, 0, marshal(t, messages.NewAspUp(nil, nil)))
	for _, s := range isupSamples {
		src, dst := a, b
		if s.opc == 2002 {
			src, dst = b, a
		}
		put(src, dst, 1+uint16(s.sls), DataMessage(s.opc, s.dpc, 5, 2, 0, s.sls, s.payload, 7))
	}
	put(b, a, 0, marshal(t, messages.NewDestinationUnavailable(nil, nil,
		params.NewAffectedPointCode(3003), nil)))
	put(b, a, 0, marshal(t, messages.NewSignallingCongestion(nil, nil,
		params.NewAffectedPointCode(2002), nil, params.NewCongestionIndications(2), nil)))
	return buf.Bytes(), sent
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWriterTshark writes M3UA in every IP link type, over SCTP and over
// UDP, and checks what tshark decodes: valid CRC32c, the M3UA class/type,
// the Protocol Data label, and the ISUP message type and CIC.
func TestWriterTshark(t *testing.T) {
	v4a, v4b := netip.MustParseAddrPort("10.0.0.1:2905"), netip.MustParseAddrPort("10.0.0.2:2906")
	v6a, v6b := netip.MustParseAddrPort("[2001:db8::1]:2905"), netip.MustParseAddrPort("[2001:db8::2]:2906")
	cases := []struct {
		name string
		a, b netip.AddrPort
		udp  bool
		opts []Option
	}{
		{"ethernet-ipv4", v4a, v4b, false, nil},
		{"ethernet-ipv6", v6a, v6b, false, nil},
		{"ethernet-ipv4-udp", v4a, v4b, true, []Option{WithSCTPOverUDP(DefaultSCTPOverUDPPort)}},
		{"ethernet-ipv6-udp", v6a, v6b, true, []Option{WithSCTPOverUDP(DefaultSCTPOverUDPPort)}},
		{"sll-ipv4", v4a, v4b, false, []Option{WithLinkType(LinkSLL)}},
		{"raw-ipv6", v6a, v6b, false, []Option{WithLinkType(LinkRaw)}},
		{"ipv4-linktype", v4a, v4b, false, []Option{WithLinkType(LinkIPv4), WithMicroseconds()}},
		{"sll2-ipv4", v4a, v4b, false, []Option{WithLinkType(LinkSLL2)}},
		{"sll2-ipv6-udp", v6a, v6b, true, []Option{WithLinkType(LinkSLL2), WithSCTPOverUDP(DefaultSCTPOverUDPPort)}},
		{"null-ipv4", v4a, v4b, false, []Option{WithLinkType(LinkNull)}},
		{"null-ipv6", v6a, v6b, false, []Option{WithLinkType(LinkNull)}},
		{"loop-ipv4", v4a, v4b, false, []Option{WithLinkType(LinkLoop)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, sent := writeSampleM3UA(t, c.a, c.b, c.opts...)

			// Our own Reader first: it needs no tshark.
			r, err := NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, r)
			if st := r.Stats(); st.BadCRC != 0 || st.Adler32 != 0 {
				t.Errorf("reader stats %+v", st)
			}
			checkRoundTrip(t, got, sent)

			path := writeTemp(t, c.name+".pcap", data)
			rows := tsharkFields(t, path, []string{"sctp.checksum:CRC 32c", "udp.check_checksum:TRUE", "ip.check_checksum:TRUE"},
				"frame.number", "sctp.checksum.status", "udp.checksum.status", "ip.checksum.status",
				"m3ua.message_class", "m3ua.message_type",
				"m3ua.protocol_data_opc", "m3ua.protocol_data_dpc", "m3ua.protocol_data_si", "m3ua.protocol_data_sls",
				"isup.message_type", "isup.cic")
			if len(rows) != len(sent) {
				t.Fatalf("tshark sees %d frames, wrote %d", len(rows), len(sent))
			}
			for i, row := range rows {
				for len(row) < 12 {
					row = append(row, "")
				}
				if row[1] != "1" {
					t.Errorf("frame %d: sctp.checksum.status %q, want 1 (good)", i+1, row[1])
				}
				if a := c.a.Addr(); a.Is4() && row[3] != "1" {
					t.Errorf("frame %d: ip.checksum.status %q, want 1 (good)", i+1, row[3])
				}
				if c.udp && row[2] != "1" {
					t.Errorf("frame %d: udp.checksum.status %q, want 1 (good)", i+1, row[2])
				}
				wantClass, wantType := sent[i][2], sent[i][3]
				if row[4] != fmt.Sprint(wantClass) || row[5] != fmt.Sprint(wantType) {
					t.Errorf("frame %d: m3ua class/type %s/%s, want %d/%d", i+1, row[4], row[5], wantClass, wantType)
				}
				if i == 0 || i > len(isupSamples) {
					if row[10] != "" {
						t.Errorf("frame %d: unexpected ISUP %q", i+1, row[10])
					}
					continue
				}
				s := isupSamples[i-1]
				want := fmt.Sprintf("%d %d 5 %d %d %d", s.opc, s.dpc, s.sls, s.msgType, s.cic)
				have := fmt.Sprintf("%s %s %s %s %s %s", row[6], row[7], row[8], row[9], row[10], row[11])
				if have != want {
					t.Errorf("frame %d: tshark opc dpc si sls isup.type cic = %q, want %q", i+1, have, want)
				}
			}
		})
	}
}

// checkRoundTrip compares the Reader's view with the messages written.
func checkRoundTrip(t *testing.T, got []Message, sent [][]byte) {
	t.Helper()
	if len(got) != len(sent) {
		t.Fatalf("read %d messages, wrote %d", len(got), len(sent))
	}
	for i, m := range got {
		if m.Frame != i+1 || !bytes.Equal(m.M3UA, sent[i]) || m.Framing != FramingM3UA || m.PPID != ppidM3UA {
			t.Errorf("message %d: frame %d framing %v ppid %d m3ua %x, want %x", i, m.Frame, m.Framing, m.PPID, m.M3UA, sent[i])
		}
		if i >= 1 && i <= len(isupSamples) {
			s := isupSamples[i-1]
			if !m.HasLabel || m.OPC != s.opc || m.DPC != s.dpc || m.SI != 5 || m.NI != 2 || m.SLS != s.sls ||
				!bytes.Equal(m.Payload, s.payload) || m.Stream != 1+uint16(s.sls) {
				t.Errorf("message %d: %+v, want label %+v", i, m, s)
			}
		} else if m.HasLabel {
			t.Errorf("message %d (class %d type %d) has a label", i, m.Class, m.Type)
		}
	}
}

// TestWriterMTPTshark writes MSUs on the MTP3 and MTP2 link types and checks
// tshark's MTP3 and ISUP decode and our Reader's.
func TestWriterMTPTshark(t *testing.T) {
	cases := []struct {
		name  string
		link  LinkType
		ansi  bool
		prefs []string
		opc   string // tshark field names differ per variant
		dpc   string
	}{
		{"mtp3-itu", LinkMTP3, false, nil, "mtp3.opc", "mtp3.dpc"},
		{"mtp2-itu", LinkMTP2, false, nil, "mtp3.opc", "mtp3.dpc"},
		{"mtp3-ansi", LinkMTP3, true, []string{"mtp3.standard:ANSI"}, "mtp3.opc", "mtp3.dpc"},
		{"mtp2-ansi", LinkMTP2, true, []string{"mtp3.standard:ANSI"}, "mtp3.opc", "mtp3.dpc"},
		{"mtp2-phdr-itu", LinkMTP2WithPHDR, false, nil, "mtp3.opc", "mtp3.dpc"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, WithLinkType(c.link), WithANSI(c.ansi))
			if err != nil {
				t.Fatal(err)
			}
			scale := uint32(1)
			if c.ansi {
				scale = 1000 // exercise 24-bit point codes
			}
			const sio = 0x85 // NI 2 (national), SI 5 (ISUP)
			for _, s := range isupSamples {
				l := Label{OPC: s.opc * scale, DPC: s.dpc * scale, SLS: s.sls}
				if err := w.WriteMSU(time.Time{}, sio, l, s.payload); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.WriteM3UA(time.Time{}, netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"), 1, nil); err == nil {
				t.Error("WriteM3UA on an MTP link type succeeded")
			}

			r, err := NewReader(bytes.NewReader(buf.Bytes()), WithANSI(c.ansi))
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, r)
			if len(got) != len(isupSamples) {
				t.Fatalf("read %d MSUs, wrote %d", len(got), len(isupSamples))
			}
			wantFraming := FramingMTP3
			if c.link != LinkMTP3 {
				wantFraming = FramingMTP2
			}
			for i, m := range got {
				s := isupSamples[i]
				if m.Framing != wantFraming || !m.HasLabel || m.OPC != s.opc*scale || m.DPC != s.dpc*scale ||
					m.SLS != s.sls || m.SI != 5 || m.NI != 2 || !bytes.Equal(m.Payload, s.payload) || m.MSU[0] != sio {
					t.Errorf("MSU %d: %+v, want %+v", i, m, s)
				}
			}

			path := writeTemp(t, c.name+".pcap", buf.Bytes())
			rows := tsharkFields(t, path, c.prefs, "frame.number", c.opc, c.dpc,
				"mtp3.service_indicator", "mtp3.sls", "isup.message_type", "isup.cic")
			if len(rows) != len(isupSamples) {
				t.Fatalf("tshark sees %d frames", len(rows))
			}
			for i, row := range rows {
				for len(row) < 7 {
					row = append(row, "")
				}
				s := isupSamples[i]
				want := fmt.Sprintf("%d %d 5 %d %d %d", s.opc*scale, s.dpc*scale, s.sls, s.msgType, s.cic)
				have := fmt.Sprintf("%s %s %d %s %s %s", row[1], row[2], atou(t, row[3]), row[4], row[5], row[6])
				if have != want {
					t.Errorf("frame %d: tshark opc dpc si sls isup.type cic = %q, want %q", i+1, have, want)
				}
			}
		})
	}
}

// TestWriterConcurrent writes from several goroutines (as the M3UA layer
// does for several associations) and checks that every message arrives and
// that TSNs and SSNs stay consecutive per direction and stream.
func TestWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	const assocs, perAssoc = 8, 200
	var wg sync.WaitGroup
	for a := range assocs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 1, byte(a)}), 2905)
			dst := netip.MustParseAddrPort("10.0.0.254:2905")
			for i := range perAssoc {
				m := DataMessage(uint32(a), 1, 5, 2, 0, uint8(i), []byte{byte(i), 0, 16, 0})
				if err := w.WriteM3UA(time.Time{}, src, dst, 1, m); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()

	// Raw check of TSN and SSN from the frames: Ethernet(14)+IPv4(20)+SCTP(12).
	r, err := NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	if len(got) != assocs*perAssoc {
		t.Fatalf("read %d messages, want %d", len(got), assocs*perAssoc)
	}
	next := map[uint32]int{}
	for _, m := range got {
		if int(m.SLS) != next[m.OPC]%256 {
			t.Fatalf("association %d: message %d out of order", m.OPC, m.SLS)
		}
		next[m.OPC]++
	}
	src := rawFrames(t, buf.Bytes())
	tsn, ssn := map[string]uint32{}, map[string]uint16{}
	for _, f := range src {
		s := f[14+20:]
		key := fmt.Sprint(f[14+12 : 14+20])
		gotTSN, gotSSN := be32(s[16:20]), uint16(s[22])<<8|uint16(s[23])
		if want, ok := tsn[key]; ok && gotTSN != want {
			t.Fatalf("%s: TSN %d, want %d", key, gotTSN, want)
		}
		if want := ssn[key]; gotSSN != want {
			t.Fatalf("%s: SSN %d, want %d", key, gotSSN, want)
		}
		tsn[key], ssn[key] = gotTSN+1, gotSSN+1
	}
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
