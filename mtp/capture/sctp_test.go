package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"
)

// Builders for hand-made frames.

func dataChunkB(flags uint8, tsn uint32, sid, ssn uint16, ppid uint32, data []byte) []byte {
	c := make([]byte, 16, 16+len(data)+3)
	c[0], c[1] = chunkData, flags
	binary.BigEndian.PutUint16(c[2:4], uint16(16+len(data)))
	binary.BigEndian.PutUint32(c[4:8], tsn)
	binary.BigEndian.PutUint16(c[8:10], sid)
	binary.BigEndian.PutUint16(c[10:12], ssn)
	binary.BigEndian.PutUint32(c[12:16], ppid)
	c = append(c, data...)
	for len(c)%4 != 0 {
		c = append(c, 0)
	}
	return c
}

func idataChunkB(flags uint8, tsn uint32, sid uint16, mid, ppidOrFSN uint32, data []byte) []byte {
	c := make([]byte, 20, 20+len(data)+3)
	c[0], c[1] = chunkIData, flags
	binary.BigEndian.PutUint16(c[2:4], uint16(20+len(data)))
	binary.BigEndian.PutUint32(c[4:8], tsn)
	binary.BigEndian.PutUint16(c[8:10], sid)
	binary.BigEndian.PutUint32(c[12:16], mid)
	binary.BigEndian.PutUint32(c[16:20], ppidOrFSN)
	c = append(c, data...)
	for len(c)%4 != 0 {
		c = append(c, 0)
	}
	return c
}

func sctpPkt(sp, dp uint16, chunks ...[]byte) []byte {
	p := make([]byte, 12)
	binary.BigEndian.PutUint16(p[0:2], sp)
	binary.BigEndian.PutUint16(p[2:4], dp)
	binary.BigEndian.PutUint32(p[4:8], 0x1234)
	for _, c := range chunks {
		p = append(p, c...)
	}
	putChecksum(p)
	return p
}

func ipv4Pkt(proto uint8, flagsFrag uint16, l4 []byte) []byte {
	ip := make([]byte, 20)
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:4], uint16(20+len(l4)))
	binary.BigEndian.PutUint16(ip[6:8], flagsFrag)
	ip[8], ip[9] = 64, proto
	copy(ip[12:16], []byte{192, 0, 2, 1})
	copy(ip[16:20], []byte{192, 0, 2, 2})
	return append(ip, l4...)
}

func ipv6Pkt(next uint8, ext []byte, l4 []byte) []byte {
	ip := make([]byte, 40)
	ip[0] = 0x60
	binary.BigEndian.PutUint16(ip[4:6], uint16(len(ext)+len(l4)))
	ip[6], ip[7] = next, 64
	ip[8], ip[23] = 0x20, 1
	ip[24], ip[39] = 0x20, 2
	return append(append(ip, ext...), l4...)
}

func ethFrame(typ uint16, payload []byte, vlans ...uint16) []byte {
	f := make([]byte, 12, 64)
	for _, v := range vlans {
		f = binary.BigEndian.AppendUint16(f, etherVLAN)
		f = binary.BigEndian.AppendUint16(f, v)
	}
	f = binary.BigEndian.AppendUint16(f, typ)
	return append(f, payload...)
}

func readBytes(t *testing.T, b []byte, opts ...Option) ([]Message, []error, Stats) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b), opts...)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []Message
	var errs []error
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			return msgs, errs, r.Stats()
		}
		var fe *FrameError
		if !errors.As(err, &fe) && err != nil {
			t.Fatalf("fatal: %v", err)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		msgs = append(msgs, m)
	}
}

func TestCRC32cVector(t *testing.T) {
	// RFC 3720 B.4: 32 octets of zero give 0x8a9136aa.
	if got := crc32.Checksum(make([]byte, 32), castagnoli); got != 0x8a9136aa {
		t.Fatalf("crc32c = %#x", got)
	}
}

func TestBundledAndFragmented(t *testing.T) {
	iam := DataMessage(1, 2, 5, 2, 0, 1, iamCIC1)
	anm := DataMessage(2, 1, 5, 2, 0, 2, anmCIC2)
	aspup := []byte{1, 0, 3, 1, 0, 0, 0, 8}
	third := len(iam) / 3
	frames := [][]byte{
		// Bundled: ASPUP, a SACK (skipped), ANM.
		ethFrame(etherIPv4, ipv4Pkt(protoSCTP, 0, sctpPkt(2905, 2905,
			dataChunkB(3, 10, 0, 0, 3, aspup),
			[]byte{3, 0, 0, 16, 0, 0, 0, 9, 0, 0, 0x10, 0, 0, 0, 0, 0},
			dataChunkB(3, 11, 1, 0, 3, anm)))),
		// IAM in three fragments over two packets behind two VLAN tags.
		ethFrame(etherIPv4, ipv4Pkt(protoSCTP, 0, sctpPkt(2905, 2905,
			dataChunkB(flagBegin, 12, 1, 1, 3, iam[:third]),
			dataChunkB(0, 13, 1, 1, 3, iam[third:2*third]))), 100, 200),
		ethFrame(etherIPv4, ipv4Pkt(protoSCTP, 0, sctpPkt(2905, 2905,
			dataChunkB(flagEnd, 14, 1, 1, 3, iam[2*third:])))),
		// A gap (TSN 21 missing): dropped, counted.
		ethFrame(etherIPv4, ipv4Pkt(protoSCTP, 0, sctpPkt(2905, 2905,
			dataChunkB(flagBegin, 20, 1, 2, 3, iam[:third]),
			dataChunkB(flagEnd, 22, 1, 2, 3, iam[third:])))),
		// I-DATA in IPv6 behind a hop-by-hop header, fragments out of TSN
		// order but with consecutive FSNs.
		ethFrame(etherIPv6, ipv6Pkt(ip6HopByHop, []byte{protoSCTP, 0, 1, 4, 0, 0, 0, 0}, sctpPkt(2905, 2905,
			idataChunkB(flagBegin, 30, 3, 7, 3, iam[:third]),
			idataChunkB(0, 31, 3, 7, 1, iam[third:2*third]),
			idataChunkB(flagEnd, 32, 3, 7, 2, iam[2*third:])))),
		// Not SCTP, and an IPv4 fragment.
		ethFrame(0x0806, make([]byte, 28)),
		ethFrame(etherIPv4, ipv4Pkt(protoSCTP, 0x2000, sctpPkt(2905, 2905, dataChunkB(3, 40, 1, 3, 3, anm)))),
		// Another PPID on another port.
		ethFrame(etherIPv4, ipv4Pkt(protoSCTP, 0, sctpPkt(9000, 9000, dataChunkB(3, 1, 1, 0, 46, anm)))),
	}
	msgs, errs, st := readBytes(t, buildPcap(t, LinkEthernet, frames...))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if len(msgs) != 4 {
		t.Fatalf("got %d messages: %+v", len(msgs), msgs)
	}
	want := []struct {
		frame  int
		class  uint8
		stream uint16
		m3ua   []byte
	}{{1, 3, 0, aspup}, {1, 1, 1, anm}, {3, 1, 1, iam}, {5, 1, 3, iam}}
	for i, w := range want {
		m := msgs[i]
		if m.Frame != w.frame || m.Class != w.class || m.Stream != w.stream || !bytes.Equal(m.M3UA, w.m3ua) {
			t.Errorf("message %d: frame %d class %d stream %d %x", i, m.Frame, m.Class, m.Stream, m.M3UA)
		}
	}
	if !bytes.Equal(msgs[2].Payload, iamCIC1) || msgs[3].Src.Addr().Is4() {
		t.Errorf("reassembled IAM: %+v", msgs[2])
	}
	if st.ReasmDrops != 1 || st.IPFragments != 1 || st.Skipped != 1 || st.NonM3UA != 1 || st.BadCRC != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestOtherLinkTypes(t *testing.T) {
	anm := DataMessage(2, 1, 5, 2, 0, 2, anmCIC2)
	ip4 := ipv4Pkt(protoSCTP, 0, sctpPkt(2905, 2905, dataChunkB(3, 1, 1, 0, 3, anm)))
	udp := make([]byte, 8)
	binary.BigEndian.PutUint16(udp[0:2], 30000)
	binary.BigEndian.PutUint16(udp[2:4], 30000)
	sctp := sctpPkt(2905, 2905, dataChunkB(3, 1, 1, 0, 3, anm))
	binary.BigEndian.PutUint16(udp[4:6], uint16(8+len(sctp)))
	ip4udp := ipv4Pkt(protoUDP, 0, append(udp, sctp...))
	sll := append([]byte{0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x08, 0x00}, ip4...)
	sll2 := append([]byte{0x08, 0x00, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0}, ip4...)
	null := append([]byte{2, 0, 0, 0}, ip4...)
	loop := append([]byte{0, 0, 0, 2}, ip4...)
	cases := []struct {
		name  string
		link  LinkType
		frame []byte
		opts  []Option
	}{
		{"raw", LinkRaw, ip4, nil},
		{"raw12", LinkRawDLT12, ip4, nil},
		{"ipv4", LinkIPv4, ip4, nil},
		{"sll", LinkSLL, sll, nil},
		{"sll2", LinkSLL2, sll2, nil},
		{"null", LinkNull, null, nil},
		{"loop", LinkLoop, loop, nil},
		{"udp-custom-port", LinkRaw, ip4udp, []Option{WithSCTPOverUDP(30000)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msgs, errs, _ := readBytes(t, buildPcap(t, c.link, c.frame), c.opts...)
			if len(errs) != 0 || len(msgs) != 1 || !bytes.Equal(msgs[0].Payload, anmCIC2) {
				t.Fatalf("msgs %+v errs %v", msgs, errs)
			}
			if msgs[0].Src.String() != "192.0.2.1:2905" {
				t.Errorf("src %v", msgs[0].Src)
			}
		})
	}
}

func TestMTP2PseudoHeaderAndFISU(t *testing.T) {
	msu := []byte{0x85, 0x02, 0x40, 0x00, 0x10} // SIO, ITU label DPC 2 OPC 1 SLS 1
	msu = append(msu, anmCIC2...)
	fisu := []byte{0, 0, 0, 1, 0xff, 0x80, 0} // pseudo-header, BSN, FSN, LI 0
	frame := append([]byte{0, 0, 0, 1, 0xff, 0x81, byte(len(msu))}, msu...)
	// Annex A: 6-octet header, LI in octet 5.
	ext := append([]byte{1, 1, 0, 1, 0xff, 0x8f, 0x01, 0x80, byte(len(msu)), 0}, msu...)
	msgs, errs, st := readBytes(t, buildPcap(t, LinkMTP2WithPHDR, fisu, frame, ext))
	if len(errs) != 0 || len(msgs) != 2 || st.MTP2NonMSU != 1 {
		t.Fatalf("msgs %+v errs %v stats %+v", msgs, errs, st)
	}
	for _, m := range msgs {
		if m.DPC != 2 || m.OPC != 1 || m.SLS != 1 || m.SI != 5 || m.NI != 2 || !bytes.Equal(m.Payload, anmCIC2) {
			t.Errorf("%+v", m)
		}
	}
}

func TestErrors(t *testing.T) {
	if _, err := NewReader(strings.NewReader("hello world, not a capture")); !errors.Is(err, ErrBadMagic) {
		t.Errorf("bad magic: %v", err)
	}
	if _, err := NewReader(bytes.NewReader(buildPcap(t, 147))); !errors.Is(err, ErrLinkType) || !strings.Contains(err.Error(), "147") {
		t.Errorf("link type: %v", err)
	}
	if _, err := Open("/nonexistent/x.pcap"); err == nil {
		t.Error("Open of a missing file succeeded")
	}
	good := ethFrame(etherIPv4, ipv4Pkt(protoSCTP, 0, sctpPkt(2905, 2905, dataChunkB(3, 1, 1, 0, 3, DataMessage(2, 1, 5, 2, 0, 2, anmCIC2)))))
	// A chunk whose length runs past the packet.
	bad := sctpPkt(2905, 2905, dataChunkB(3, 2, 1, 1, 3, DataMessage(2, 1, 5, 2, 0, 2, anmCIC2)))
	binary.BigEndian.PutUint16(bad[14:16], 200)
	badFrame := ethFrame(etherIPv4, ipv4Pkt(protoSCTP, 0, bad))
	path := writeTemp(t, "x.pcap", buildPcap(t, LinkEthernet, good, badFrame, good))
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var n int
	var errs []error
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if n != 2 || len(errs) != 1 {
		t.Fatalf("%d messages, errors %v", n, errs)
	}
	var fe *FrameError
	if !errors.As(errs[0], &fe) || fe.Frame != 2 || !errors.Is(errs[0], ErrTruncated) ||
		errs[0].Error() != "capture: "+path+": frame 2: truncated SCTP chunk" {
		t.Errorf("error %q", errs[0])
	}
}

// TestTruncatedFile cuts a capture inside its second record: the first
// message is delivered, then a fatal *ReadError (not a FrameError, which
// would invite the caller to go on) names the file and frame, every time.
func TestTruncatedFile(t *testing.T) {
	good := ethFrame(etherIPv4, ipv4Pkt(protoSCTP, 0, sctpPkt(2905, 2905, dataChunkB(3, 1, 1, 0, 3, DataMessage(2, 1, 5, 2, 0, 2, anmCIC2)))))
	b := buildPcap(t, LinkEthernet, good, good)
	path := writeTemp(t, "cut.pcap", b[:len(b)-10])
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Next(); err != nil {
		t.Fatalf("first message: %v", err)
	}
	for i := 0; i < 2; i++ {
		_, err := r.Next()
		var re *ReadError
		var fe *FrameError
		if !errors.As(err, &re) || errors.As(err, &fe) || re.Frame != 2 || !errors.Is(err, ErrTruncated) {
			t.Fatalf("call %d: %v", i, err)
		}
		if want := "capture: " + path + ": frame 2: file truncated inside the record (unexpected EOF)"; err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
	}
	// NewReader with WithFileName names the file too.
	r2, err := NewReader(bytes.NewReader(b[:len(b)-10]), WithFileName("named.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	r2.Next()
	if _, err := r2.Next(); err == nil || !strings.Contains(err.Error(), "named.pcap: frame 2") {
		t.Errorf("NewReader error %v", err)
	}
}

func TestPcapng(t *testing.T) {
	var buf bytes.Buffer
	w, err := pcapgoNg(&buf, LinkEthernet)
	if err != nil {
		t.Fatal(err)
	}
	frame := ethFrame(etherIPv4, ipv4Pkt(protoSCTP, 0, sctpPkt(2905, 2905, dataChunkB(3, 1, 1, 0, 3, DataMessage(2, 1, 5, 2, 0, 2, anmCIC2)))))
	if err := w(frame); err != nil {
		t.Fatal(err)
	}
	msgs, errs, _ := readBytes(t, buf.Bytes())
	if len(errs) != 0 || len(msgs) != 1 || msgs[0].OPC != 2 {
		t.Fatalf("msgs %+v errs %v", msgs, errs)
	}
}
