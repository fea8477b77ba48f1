package transport

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	mrand "math/rand/v2"
	"net/netip"
	"sync"
	"time"
)

// The listeners answer INIT without keeping anything (RFC 9260 §5.1 step
// C: "Z" MUST NOT allocate any resources or keep any states for the new
// association): the INIT ACK carries everything needed in a State Cookie
// signed with a key only the listener knows (§5.1.3). An association, and
// every buffer and goroutine it needs, is built only from a COOKIE ECHO
// whose cookie verifies (§5.1.5).

// More SCTP wire constants (RFC 9260 §3.3).
const (
	chunkError         = 9
	chunkCookieAck     = 11
	paramStateCookie   = 7
	paramSupportedExts = 0x8008 // RFC 5061 §4.2.7
	causeStaleCookie   = 3      // RFC 9260 §3.3.10.3
	causeOutOfResource = 4      // RFC 9260 §3.3.10.4
	chunkReconfig      = 130    // RFC 6525
	chunkForwardTSN    = 192    // RFC 3758
)

// DefaultCookieLife is Valid.Cookie.Life (RFC 9260 §16).
const DefaultCookieLife = 60 * time.Second

// maxCookieInit bounds the peer INIT a cookie carries (after the address
// parameters are stripped). Linux and usrsctp send well under 200 bytes;
// a larger INIT is refused rather than echoed into a large INIT ACK.
const maxCookieInit = 512

// Cookie layout: fixed fields, the peer's INIT chunk, then the MAC.
const (
	cookieVersion  = 1
	cookieFixedLen = 48
	cookieMACLen   = sha256.Size
)

// cookieState is what a verified cookie says about the association to build.
type cookieState struct {
	localTag, localTSN uint32
	peerTag            uint32
	peerInit           []byte // the peer's INIT chunk (header included)
	mac                [cookieMACLen]byte
}

// cookieJar makes and checks State Cookies. Keys are random per listener
// and change every cookie life (§5.1.3: the secret key SHOULD be random
// and SHOULD be changed reasonably frequently); a cookie made with the key
// before the current one still verifies, so none dies before its life.
type cookieJar struct {
	life time.Duration
	now  func() time.Time

	mu        sync.Mutex
	cur, prev *cookieKey
}

type cookieKey struct {
	made time.Time
	macs sync.Pool // hash.Hash keyed with the key
}

func newCookieKey(made time.Time) *cookieKey {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		panic("transport: no randomness for the cookie key: " + err.Error())
	}
	k := &cookieKey{made: made}
	k.macs.New = func() any { return hmac.New(sha256.New, key[:]) }
	return k
}

func newCookieJar(life time.Duration, now func() time.Time) *cookieJar {
	return &cookieJar{life: life, now: now, cur: newCookieKey(now())}
}

// keys returns the current key and the one before, rotating first if the
// current one has served a cookie life.
func (j *cookieJar) keys(now time.Time) (cur, prev *cookieKey) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if now.Sub(j.cur.made) >= j.life || now.Before(j.cur.made) {
		j.prev, j.cur = j.cur, newCookieKey(now)
	}
	return j.cur, j.prev
}

func (k *cookieKey) sum(dst, b []byte) []byte {
	h := k.macs.Get().(hash.Hash)
	h.Reset()
	h.Write(b)
	dst = h.Sum(dst)
	k.macs.Put(h)
	return dst
}

// binding ties a cookie to the addresses and ports its INIT came from
// (§5.1.3: "the cookie … all the information necessary to establish the
// association"); a COOKIE ECHO from anywhere else does not verify.
type binding struct {
	from             netip.AddrPort // UDP source, or IP and SCTP port for raw
	srcPort, dstPort uint16         // SCTP ports in the INIT's common header
}

func (b binding) put(c []byte) {
	a16 := b.from.Addr().As16()
	copy(c, a16[:])
	binary.BigEndian.PutUint16(c[16:], b.from.Port())
	binary.BigEndian.PutUint16(c[18:], b.srcPort)
	binary.BigEndian.PutUint16(c[20:], b.dstPort)
}

// make builds the cookie for an INIT chunk (already checked and stripped).
func (j *cookieJar) make(init []byte, b binding, localTag, localTSN uint32) []byte {
	now := j.now()
	key, _ := j.keys(now)
	c := make([]byte, cookieFixedLen, cookieFixedLen+len(init)+cookieMACLen)
	c[0] = cookieVersion
	binary.BigEndian.PutUint64(c[4:], uint64(now.UnixNano()))
	binary.BigEndian.PutUint32(c[12:], uint32(j.life/time.Millisecond))
	binary.BigEndian.PutUint32(c[16:], localTag)
	binary.BigEndian.PutUint32(c[20:], localTSN)
	b.put(c[24:46])
	binary.BigEndian.PutUint16(c[46:], uint16(len(init)))
	c = append(c, init...)
	return key.sum(c, c)
}

// Cookie check failures.
var (
	errBadCookie   = errors.New("transport: state cookie does not verify")
	errStaleCookie = errors.New("transport: state cookie is stale")
)

// open checks a cookie as §5.1.5 says: the MAC first (1, 2), then the
// verification tag and ports against the packet (3), then its age (4). A
// stale cookie returns errStaleCookie, the state (for the peer's tag, to
// answer with) and how long past its life it is.
func (j *cookieJar) open(cookie []byte, b binding, vtag uint32) (*cookieState, time.Duration, error) {
	if len(cookie) < cookieFixedLen+cookieMACLen || len(cookie) > cookieFixedLen+maxCookieInit+cookieMACLen {
		return nil, 0, errBadCookie
	}
	now := j.now()
	body, mac := cookie[:len(cookie)-cookieMACLen], cookie[len(cookie)-cookieMACLen:]
	var want [cookieMACLen]byte
	cur, prev := j.keys(now)
	if !hmac.Equal(cur.sum(want[:0], body), mac) && (prev == nil || !hmac.Equal(prev.sum(want[:0], body), mac)) {
		return nil, 0, errBadCookie
	}
	// The MAC proves we wrote the rest, so it is well formed.
	var here [22]byte
	b.put(here[:])
	if body[0] != cookieVersion || string(body[24:46]) != string(here[:]) ||
		binary.BigEndian.Uint32(body[16:]) != vtag ||
		int(binary.BigEndian.Uint16(body[46:])) != len(body)-cookieFixedLen {
		return nil, 0, errBadCookie
	}
	st := &cookieState{
		localTag: vtag, localTSN: binary.BigEndian.Uint32(body[20:]),
		peerInit: append([]byte(nil), body[cookieFixedLen:]...),
	}
	st.peerTag = binary.BigEndian.Uint32(st.peerInit[4:])
	copy(st.mac[:], cookie[len(body):])
	issued := time.Unix(0, int64(binary.BigEndian.Uint64(body[4:])))
	life := time.Duration(binary.BigEndian.Uint32(body[12:])) * time.Millisecond
	if age := now.Sub(issued); age > life || age < 0 {
		return st, max(age-life, 0), errStaleCookie
	}
	return st, 0, nil
}

// Malformed INITs (counted, silently dropped).
var errBadInit = errors.New("transport: malformed INIT")

// checkInit validates an INIT packet (checksum already checked) and returns
// its INIT chunk with address parameters stripped, the flags cleared, and
// nothing after it.
func checkInit(pkt []byte) ([]byte, error) {
	// §8.5.1: a packet with an INIT has verification tag 0 and no other
	// chunk (§6.10); §3.3.2: initiate tag, OS and MIS are not zero.
	if len(pkt) < sctpCommonHeaderLen+4+initFixedLen || firstChunkType(pkt) != chunkInit ||
		binary.BigEndian.Uint32(pkt[4:]) != 0 {
		return nil, errBadInit
	}
	clen := int(binary.BigEndian.Uint16(pkt[sctpCommonHeaderLen+2:]))
	if clen < 4+initFixedLen || sctpCommonHeaderLen+clen > len(pkt) ||
		len(pkt)-sctpCommonHeaderLen-((clen+3)&^3) >= 4 {
		return nil, errBadInit
	}
	p := append([]byte(nil), pkt[:sctpCommonHeaderLen+clen]...)
	p, err := stripInitAddresses(p)
	if err != nil {
		return nil, errBadInit
	}
	c := p[sctpCommonHeaderLen:]
	c = c[:binary.BigEndian.Uint16(c[2:])]
	if binary.BigEndian.Uint32(c[4:]) == 0 || binary.BigEndian.Uint16(c[12:]) == 0 ||
		binary.BigEndian.Uint16(c[14:]) == 0 || len(c) > maxCookieInit {
		return nil, errBadInit
	}
	c[1] = 0 // flags are reserved; pion refuses an INIT that sets them
	return c, nil
}

// nonZeroRandom is a fresh initiate tag or TSN (§5.3.1: tags are random
// and not zero).
func nonZeroRandom() uint32 {
	for {
		if v := mrand.Uint32(); v != 0 {
			return v
		}
	}
}

// initAck builds our INIT ACK to an INIT (§3.3.3): what pion would send,
// with the State Cookie in place of pion's own.
func initAck(init []byte, srcPort, dstPort uint16, localTag, localTSN, rwnd uint32, streams uint16, cookie []byte) []byte {
	cl := 4 + len(cookie)
	size := sctpCommonHeaderLen + 4 + initFixedLen + (cl+3)&^3 + 8
	p := make([]byte, size)
	binary.BigEndian.PutUint32(p[4:], binary.BigEndian.Uint32(init[4:])) // the peer's initiate tag
	c := p[sctpCommonHeaderLen:]
	c[0] = chunkInitAck
	binary.BigEndian.PutUint16(c[2:], uint16(len(c)-2)) // the last parameter's padding is excluded (§3.2)
	binary.BigEndian.PutUint32(c[4:], localTag)
	binary.BigEndian.PutUint32(c[8:], rwnd)
	binary.BigEndian.PutUint16(c[12:], streams)
	binary.BigEndian.PutUint16(c[14:], streams)
	binary.BigEndian.PutUint32(c[16:], localTSN)
	q := c[4+initFixedLen:]
	binary.BigEndian.PutUint16(q[0:], paramStateCookie)
	binary.BigEndian.PutUint16(q[2:], uint16(cl))
	copy(q[4:], cookie)
	// pion supports RE-CONFIG and FORWARD TSN and says so in its own INIT ACK.
	q = q[(cl+3)&^3:]
	binary.BigEndian.PutUint16(q[0:], paramSupportedExts)
	binary.BigEndian.PutUint16(q[2:], 6)
	q[4], q[5] = chunkReconfig, chunkForwardTSN
	setPorts(p, srcPort, dstPort)
	return p
}

// cookieEcho returns the cookie of a packet whose first chunk is COOKIE
// ECHO and the chunks bundled after it (DATA may ride with it, §5.1 step E).
func cookieEcho(pkt []byte) (cookie, rest []byte, ok bool) {
	if firstChunkType(pkt) != chunkCookieEcho {
		return nil, nil, false
	}
	c := pkt[sctpCommonHeaderLen:]
	clen := int(binary.BigEndian.Uint16(c[2:]))
	if clen < 4 || clen > len(c) {
		return nil, nil, false
	}
	if padded := (clen + 3) &^ 3; padded+4 <= len(c) {
		rest = c[padded:]
	}
	return c[4:clen], rest, true
}

// withHeader makes a packet of chunks under hdr's common header.
func withHeader(hdr, chunks []byte) []byte {
	p := make([]byte, sctpCommonHeaderLen+len(chunks))
	copy(p, hdr[:sctpCommonHeaderLen])
	copy(p[sctpCommonHeaderLen:], chunks)
	src, dst := packetPorts(p)
	setPorts(p, src, dst)
	return p
}

// control builds a one-chunk packet from us to the peer: ports swapped
// from the packet we answer, the peer's tag.
func control(answering []byte, vtag uint32, chunk []byte) []byte {
	p := make([]byte, sctpCommonHeaderLen+len(chunk))
	binary.BigEndian.PutUint32(p[4:], vtag)
	copy(p[sctpCommonHeaderLen:], chunk)
	src, dst := packetPorts(answering)
	setPorts(p, dst, src)
	return p
}

// cookieAck answers a verified COOKIE ECHO (§5.1 step E).
func cookieAck(echo []byte, peerTag uint32) []byte {
	return control(echo, peerTag, []byte{chunkCookieAck, 0, 0, 4})
}

// staleCookieError is the ERROR §5.1.5 step 4 requires, with the Measure of
// Staleness in microseconds (§3.3.10.3).
func staleCookieError(echo []byte, peerTag uint32, by time.Duration) []byte {
	ch := []byte{chunkError, 0, 0, 12, 0, causeStaleCookie, 0, 8, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(ch[8:], uint32(min(by.Microseconds(), 1<<32-1)))
	return control(echo, peerTag, ch)
}

// outOfResourceAbort refuses a verified COOKIE ECHO for lack of room
// (§5.1: "lack of local resources … SHOULD respond with an ABORT").
func outOfResourceAbort(echo []byte, peerTag uint32) []byte {
	return control(echo, peerTag, []byte{chunkAbort, 0, 0, 8, 0, causeOutOfResource, 0, 4})
}

// snapTokens are the INIT chunks pion's out-of-band start (WithSNAP) takes:
// ours, with the tag, TSN and streams our INIT ACK announced, and the
// peer's. pion's SNAP takes each stream limit as the min of the two INITs'
// same field, so the peer's OS and MIS are swapped in its copy to give
// min(our MIS, peer OS) and min(our OS, peer MIS) as §5.1.1 wants.
func snapTokens(st *cookieState, rwnd uint32, streams uint16) (local, remote []byte) {
	local = make([]byte, 4+initFixedLen)
	local[0] = chunkInit
	binary.BigEndian.PutUint16(local[2:], uint16(len(local)))
	binary.BigEndian.PutUint32(local[4:], st.localTag)
	binary.BigEndian.PutUint32(local[8:], rwnd)
	binary.BigEndian.PutUint16(local[12:], streams)
	binary.BigEndian.PutUint16(local[14:], streams)
	binary.BigEndian.PutUint32(local[16:], st.localTSN)
	remote = append([]byte(nil), st.peerInit...)
	copy(remote[12:14], st.peerInit[14:16])
	copy(remote[14:16], st.peerInit[12:14])
	return local, remote
}

// peerMIS is the inbound stream count of the peer's INIT.
func (st *cookieState) peerMIS() uint16 { return binary.BigEndian.Uint16(st.peerInit[14:]) }
