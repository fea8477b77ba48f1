package transport

import (
	"encoding/binary"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"
)

// initPacket builds an INIT with the given parameters (type, value).
func initPacket(params ...[]byte) []byte {
	p := make([]byte, sctpCommonHeaderLen+4+initFixedLen)
	binary.BigEndian.PutUint16(p[0:], 2905)
	binary.BigEndian.PutUint16(p[2:], 2905)
	c := p[sctpCommonHeaderLen:]
	c[0] = chunkInit
	binary.BigEndian.PutUint32(c[4:], 0xdeadbeef) // initiate tag
	binary.BigEndian.PutUint32(c[8:], 65536)
	binary.BigEndian.PutUint16(c[12:], 10) // OS
	binary.BigEndian.PutUint16(c[14:], 12) // MIS
	binary.BigEndian.PutUint32(c[16:], 1)
	for _, prm := range params {
		p = append(p, prm...)
		for len(p)%4 != 0 {
			p = append(p, 0)
		}
	}
	binary.BigEndian.PutUint16(p[sctpCommonHeaderLen+2:], uint16(len(p)-sctpCommonHeaderLen))
	binary.LittleEndian.PutUint32(p[8:], sctpChecksum(p))
	return p
}

func param(t uint16, v ...byte) []byte {
	b := make([]byte, 4, 4+len(v))
	binary.BigEndian.PutUint16(b, t)
	binary.BigEndian.PutUint16(b[2:], uint16(4+len(v)))
	return append(b, v...)
}

// TestStripInitAddresses: a Linux-style INIT with IPv4, IPv6 and supported
// address types keeps only ECN (0x8000) and forward-TSN (0xC000) after
// stripping, and its chunk length shrinks to match.
func TestStripInitAddresses(t *testing.T) {
	in := initPacket(
		param(5, 127, 0, 0, 1),
		param(0x8000),
		param(6, make([]byte, 16)...),
		param(12, 0, 5, 0, 6),
		param(0xC000),
		param(9, 0, 0, 0, 1),
	)
	out, err := stripInitAddresses(append([]byte(nil), in...))
	if err != nil {
		t.Fatal(err)
	}
	c := out[sctpCommonHeaderLen:]
	clen := int(binary.BigEndian.Uint16(c[2:]))
	if clen != 4+initFixedLen+8 || len(out) != sctpCommonHeaderLen+clen {
		t.Fatalf("chunk length %d, packet %d", clen, len(out))
	}
	var types []uint16
	for off := 4 + initFixedLen; off < clen; {
		types = append(types, binary.BigEndian.Uint16(c[off:]))
		off += int(binary.BigEndian.Uint16(c[off+2:]))
	}
	if len(types) != 2 || types[0] != 0x8000 || types[1] != 0xC000 {
		t.Fatalf("params left %x", types)
	}
	if os, mis, ok := initStreams(out); !ok || os != 10 || mis != 12 {
		t.Fatalf("streams %d %d %v", os, mis, ok)
	}
	if _, err := stripInitAddresses(in[:len(in)-3]); err == nil {
		t.Fatal("truncated INIT accepted")
	}
}

// TestSetPortsChecksum: rewritten ports come with a checksum that verifies,
// and a flipped bit is detected.
func TestSetPortsChecksum(t *testing.T) {
	p := initPacket()
	setPorts(p, 1234, 2905)
	if s, d := packetPorts(p); s != 1234 || d != 2905 || !checksumOK(p) {
		t.Fatalf("ports %d %d checksum %v", s, d, checksumOK(p))
	}
	p[20] ^= 1
	if checksumOK(p) {
		t.Fatal("corruption not detected")
	}
}

// TestOOTBAbort follows RFC 9260 §8.4: an INIT gets ABORT with its initiate
// tag and T clear; other chunks get their own tag with T set; ABORT gets
// nothing.
func TestOOTBAbort(t *testing.T) {
	a := ootbAbort(initPacket())
	if a == nil || a[sctpCommonHeaderLen] != chunkAbort || a[sctpCommonHeaderLen+1] != 0 ||
		binary.BigEndian.Uint32(a[4:]) != 0xdeadbeef || !checksumOK(a) {
		t.Fatalf("INIT answer %x", a)
	}
	data := make([]byte, sctpCommonHeaderLen+16)
	binary.BigEndian.PutUint16(data[0:], 1111)
	binary.BigEndian.PutUint16(data[2:], 2222)
	binary.BigEndian.PutUint32(data[4:], 0x01020304)
	data[sctpCommonHeaderLen] = 0 // DATA
	binary.BigEndian.PutUint16(data[sctpCommonHeaderLen+2:], 16)
	binary.LittleEndian.PutUint32(data[8:], sctpChecksum(data))
	a = ootbAbort(data)
	if s, d := packetPorts(a); s != 2222 || d != 1111 || a[sctpCommonHeaderLen+1] != 1 ||
		binary.BigEndian.Uint32(a[4:]) != 0x01020304 {
		t.Fatalf("DATA answer %x", a)
	}
	if ootbAbort(a) != nil {
		t.Fatal("answered an ABORT")
	}
}

// TestRawOOTBGetsAbort sends a stray DATA packet as genuine IP protocol 132
// to a raw listener's port and expects the ABORT the kernel would send.
func TestRawOOTBGetsAbort(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("raw transport needs root")
	}
	ln, err := Listen(KindRaw, loopback)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// A second raw socket on another loopback address plays the stray peer.
	peer, err := net.ListenIP("ip4:132", &net.IPAddr{IP: net.IPv4(127, 0, 0, 2)})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	data := make([]byte, sctpCommonHeaderLen+16)
	binary.BigEndian.PutUint16(data[0:], 40000)
	binary.BigEndian.PutUint16(data[2:], ln.Addr().Port())
	binary.BigEndian.PutUint32(data[4:], 0x0a0b0c0d)
	binary.BigEndian.PutUint16(data[sctpCommonHeaderLen+2:], 16)
	binary.LittleEndian.PutUint32(data[8:], sctpChecksum(data))
	if _, err := peer.WriteToIP(data, &net.IPAddr{IP: net.IPv4(127, 0, 0, 1)}); err != nil {
		t.Fatal(err)
	}
	_ = peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1500)
	for {
		n, from, err := peer.ReadFromIP(buf)
		if err != nil {
			t.Fatalf("no ABORT: %v", err)
		}
		p := buf[:n]
		if src, _ := packetPorts(p); from.IP.Equal(net.IPv4(127, 0, 0, 1)) && src == ln.Addr().Port() {
			if p[sctpCommonHeaderLen] != chunkAbort || binary.BigEndian.Uint32(p[4:]) != 0x0a0b0c0d || !checksumOK(p) {
				t.Fatalf("answer %x", p)
			}
			if _, d := packetPorts(p); d != 40000 {
				t.Fatalf("answer to port %d", d)
			}
			return
		}
		_ = netip.Addr{}
	}
}
