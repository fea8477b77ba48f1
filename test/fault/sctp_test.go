//go:build linux

package fault

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sctpInit is an SCTP packet holding one INIT chunk (RFC 9260 §3.3.2):
// verification tag 0, a random initiate tag and initial TSN, 16 streams
// each way, and the CRC32c of §6.8 (stored little-endian, as the checksum
// is computed over the packet bytes as they are), or a wrong one.
func sctpInit(srcPort, dstPort uint16, goodCRC bool) []byte {
	p := make([]byte, 12+20)
	binary.BigEndian.PutUint16(p[0:], srcPort)
	binary.BigEndian.PutUint16(p[2:], dstPort)
	c := p[12:]
	c[0] = 1 // INIT
	binary.BigEndian.PutUint16(c[2:], 20)
	binary.BigEndian.PutUint32(c[4:], rand.Uint32()|1) // initiate tag, not zero
	binary.BigEndian.PutUint32(c[8:], 1<<20)           // a_rwnd
	binary.BigEndian.PutUint16(c[12:], 16)             // outbound streams
	binary.BigEndian.PutUint16(c[14:], 16)             // inbound streams
	binary.BigEndian.PutUint32(c[16:], rand.Uint32())  // initial TSN
	sum := crc32.Checksum(p, castagnoli)
	if !goodCRC {
		sum ^= 0x5a5a5a5a
	}
	binary.LittleEndian.PutUint32(p[8:], sum)
	return p
}

// initFlood is what the flood sent and what came back.
type initFlood struct {
	sent, badCRC, fromConfigured uint64
	initAcks                     atomic.Uint64 // INIT ACKs received (chunk type 2)
	other                        atomic.Uint64 // anything else received
	took                         time.Duration
}

// floodINITs sends n INITs to the UDP address to, from the loopback
// addresses srcs in turn (a new socket, so a new UDP source port, every
// perSocket packets), every fourth with a bad CRC32c, in bursts of 200 with
// a pause between so the listener's socket buffer holds each burst. It
// counts what the listener answers and returns after a grace period for the
// last answers.
func floodINITs(to *net.UDPAddr, srcs []net.IP, configured map[string]bool, n int) (*initFlood, error) {
	const perSocket, burst = 100, 200
	f := &initFlood{}
	var socks []*net.UDPConn
	var wg sync.WaitGroup
	defer func() {
		for _, c := range socks {
			c.Close()
		}
		wg.Wait()
	}()
	t0 := time.Now()
	var c *net.UDPConn
	for i := 0; i < n; i++ {
		if i%perSocket == 0 {
			src := srcs[(i/perSocket)%len(srcs)]
			var err error
			if c, err = net.DialUDP("udp", &net.UDPAddr{IP: src}, to); err != nil {
				return f, err
			}
			socks = append(socks, c)
			wg.Add(1)
			go func(c *net.UDPConn) { // what the listener answers
				defer wg.Done()
				buf := make([]byte, 2048)
				for {
					k, err := c.Read(buf)
					if err != nil {
						return
					}
					if k > 12 && buf[12] == 2 {
						f.initAcks.Add(1)
					} else {
						f.other.Add(1)
					}
				}
			}(c)
		}
		good := i%4 != 3
		if !good {
			f.badCRC++
		} else if configured[c.LocalAddr().(*net.UDPAddr).IP.String()] {
			f.fromConfigured++
		}
		if _, err := c.Write(sctpInit(uint16(1024+rand.IntN(60000)), sctpPort, good)); err == nil {
			f.sent++
		}
		if i%burst == burst-1 {
			time.Sleep(5 * time.Millisecond) // pacing the flood, not waiting for anything
		}
	}
	f.took = time.Since(t0)
	time.Sleep(500 * time.Millisecond) // the last INIT ACKs
	return f, nil
}

// m3uaASPUp is an ASP Up with no parameter (RFC 4666 §3.5.1: the ASP
// Identifier is optional): version 1, class 3 (ASPSM), type 1, length 8.
var m3uaASPUp = []byte{1, 0, 3, 1, 0, 0, 0, 8}

// m3uaErrorCode returns the Error Code of an M3UA ERR message (class 0,
// type 0; RFC 4666 §3.8.1, parameter tag 0x000C), or false.
func m3uaErrorCode(msg []byte) (uint32, bool) {
	if len(msg) < 8 || msg[0] != 1 || msg[2] != 0 || msg[3] != 0 {
		return 0, false
	}
	for p := msg[8:]; len(p) >= 4; {
		tag, l := binary.BigEndian.Uint16(p), int(binary.BigEndian.Uint16(p[2:]))
		if l < 4 || l > len(p) {
			return 0, false
		}
		if tag == 0x000C && l == 8 {
			return binary.BigEndian.Uint32(p[4:]), true
		}
		p = p[min((l+3)&^3, len(p)):]
	}
	return 0, false
}
