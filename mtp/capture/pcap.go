package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Framing says how a Message was carried.
type Framing uint8

// Framings.
const (
	FramingM3UA      Framing = iota + 1 // RFC 4666 M3UA (Protocol Data tag 0x0210)
	FramingM3UADraft                    // pre-RFC M3UA (draft 6): Protocol Data holds an MTP3 MSU
	FramingMTP2                         // MSU taken from an MTP2 frame
	FramingMTP3                         // MSU on the MTP3 link type
	FramingM2PA                         // MSU in an M2PA User Data message (RFC 4165)
)

func (f Framing) String() string {
	switch f {
	case FramingM3UA:
		return "M3UA"
	case FramingM3UADraft:
		return "M3UA-draft"
	case FramingMTP2:
		return "MTP2"
	case FramingMTP3:
		return "MTP3"
	case FramingM2PA:
		return "M2PA"
	}
	return fmt.Sprintf("Framing(%d)", uint8(f))
}

// M3UA message classes (RFC 4666 section 3.1.2) used by this package.
const (
	ClassMGMT     = 0
	ClassTransfer = 1
	ClassSSNM     = 2
	ClassASPSM    = 3
	ClassASPTM    = 4
	ClassRKM      = 9
	TypeData      = 1 // in ClassTransfer
)

// Message is one M3UA message or one MTP3 MSU found in a capture.
//
// Every Message owns its byte slices: they never alias the Reader's buffers,
// so callers may keep them after the next call to Next. Payload and MSU are
// sub-slices of the same Message's M3UA or MSU bytes.
type Message struct {
	Frame    int            // 1-based frame number in the file
	Time     time.Time      // capture timestamp
	Src, Dst netip.AddrPort // IP address and SCTP port; zero on MTP2/MTP3 links
	Stream   uint16         // SCTP stream identifier
	PPID     uint32         // SCTP payload protocol identifier
	Framing  Framing

	// M3UA message class and type (for FramingM2PA, M2PA's class 11 and
	// User Data); zero for FramingMTP2 and FramingMTP3 (check Framing before
	// reading them).
	Class, Type uint8
	M3UA        []byte // the whole M3UA message; nil for MTP2/MTP3 links

	// MSU is the raw MTP3 message signal unit (SIO, routing label, user
	// part) for MTP2/MTP3/M2PA links and draft M3UA; nil for RFC 4666 M3UA.
	MSU []byte

	// Routing label, set for M3UA DATA and MSUs (HasLabel true). For MSUs, NI
	// is the SIO network indicator (0..3) and MP its two spare/priority bits.
	HasLabel        bool
	OPC, DPC        uint32
	SI, NI, MP, SLS uint8
	// Payload is the MTP3 user part; for ISUP it begins with the CIC.
	Payload []byte
}

// Stats counts what the Reader saw and skipped. Skipping is silent so that a
// capture with unrelated traffic decodes without noise; these say how much.
type Stats struct {
	Frames      int // frames read
	Messages    int // messages returned
	Errors      int // FrameErrors returned
	Skipped     int // frames with no SCTP or MTP content (ARP, TCP, other link types in pcapng)
	IPFragments int // fragmented IP datagrams skipped (not reassembled)
	BadCRC      int // SCTP packets whose checksum is wrong (often offload-zeroed)
	Adler32     int // SCTP packets with a valid RFC 2960 Adler-32 checksum (pre-2002 stacks)
	NonM3UA     int // SCTP user messages with a PPID other than M3UA or M2PA
	M2PANonMSU  int // M2PA Link Status messages and User Data that only acknowledge
	ReasmDrops  int // SCTP fragments dropped: gap in TSN/FSN, too large, or no first fragment
	MTP2NonMSU  int // MTP2 FISUs and LSSUs
}

// Reader reads Messages from a pcap or pcapng capture. It is not safe for
// concurrent use.
type Reader struct {
	name   string
	src    packetSource
	closer io.Closer
	cfg    config

	frame int
	ts    time.Time
	queue []item
	fatal error
	asm   reassembler
	stats Stats
	// badLinks remembers link types already reported as unsupported.
	badLinks map[LinkType]bool
}

type item struct {
	msg Message
	err error
}

// packetSource hides the difference between pcapgo's pcap and pcapng readers.
type packetSource interface {
	next() (data []byte, ci gopacket.CaptureInfo, link LinkType, err error)
}

type pcapSource struct {
	r    *pcapgo.Reader
	link LinkType
}

func (s *pcapSource) next() ([]byte, gopacket.CaptureInfo, LinkType, error) {
	d, ci, err := s.r.ZeroCopyReadPacketData()
	return d, ci, s.link, err
}

type ngSource struct{ r *pcapgo.NgReader }

func (s *ngSource) next() ([]byte, gopacket.CaptureInfo, LinkType, error) {
	d, ci, err := s.r.ZeroCopyReadPacketData()
	// With WantMixedLinkType each packet carries its interface's link type.
	link := LinkType(0xffffffff)
	if len(ci.AncillaryData) > 0 {
		if l, ok := ci.AncillaryData[0].(layers.LinkType); ok {
			link = LinkType(l)
		}
	}
	return d, ci, link, err
}

const (
	magicPcapMicro = 0xa1b2c3d4
	magicPcapNano  = 0xa1b23c4d
	magicNg        = 0x0a0d0d0a
)

// Open opens a pcap or pcapng file. Close the Reader when done.
func Open(path string, opts ...Option) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	r, err := newReader(f, path, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader reads a pcap or pcapng stream (gzip-compressed pcap too); the
// format is detected from the magic number.
func NewReader(rd io.Reader, opts ...Option) (*Reader, error) {
	return newReader(rd, "", opts)
}

func newReader(rd io.Reader, name string, opts []Option) (*Reader, error) {
	r := &Reader{name: name, cfg: newConfig(opts)}
	if r.name == "" {
		r.name = r.cfg.name
	}
	r.asm.init(r.cfg.maxReasm)
	br := bufio.NewReaderSize(rd, 64<<10)
	head, err := br.Peek(4)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, r.fileErr(fmt.Errorf("%w (file too short)", ErrBadMagic))
		}
		return nil, r.fileErr(err)
	}
	le, be := binary.LittleEndian.Uint32(head), binary.BigEndian.Uint32(head)
	switch {
	case le == magicNg:
		ng, err := pcapgo.NewNgReader(br, pcapgo.NgReaderOptions{WantMixedLinkType: true})
		if err != nil {
			return nil, r.fileErr(fmt.Errorf("pcapng: %w", err))
		}
		// Interfaces may differ per packet; unsupported ones are reported
		// once per link type by decodeFrame.
		r.src = &ngSource{r: ng}
	case le == magicPcapMicro || be == magicPcapMicro || le == magicPcapNano || be == magicPcapNano ||
		(head[0] == 0x1f && head[1] == 0x8b):
		p, err := pcapgo.NewReader(br)
		if err != nil {
			return nil, r.fileErr(fmt.Errorf("pcap: %w", err))
		}
		l := LinkType(p.LinkType())
		if !supportedLink(l) {
			return nil, r.fileErr(fmt.Errorf("%w %d", ErrLinkType, l))
		}
		r.src = &pcapSource{r: p, link: l}
	default:
		return nil, r.fileErr(fmt.Errorf("%w (magic 0x%08x)", ErrBadMagic, be))
	}
	return r, nil
}

func (r *Reader) fileErr(err error) error {
	if r.name != "" {
		return fmt.Errorf("capture: %s: %w", r.name, err)
	}
	return fmt.Errorf("capture: %w", err)
}

// Close closes the file opened by Open; it does nothing for NewReader.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	c := r.closer
	r.closer = nil
	return c.Close()
}

// Stats returns the counters so far.
func (r *Reader) Stats() Stats { return r.stats }

// Next returns the next message. At the end of the capture it returns io.EOF.
// A *FrameError (malformed or truncated frame) is not fatal: call Next again
// to continue; messages decoded from the same frame before the problem are
// returned first. Any other error (a *ReadError when the file itself is cut
// short or corrupt) is fatal and returned again on later calls.
func (r *Reader) Next() (Message, error) {
	for {
		if len(r.queue) > 0 {
			it := r.queue[0]
			r.queue[0] = item{}
			r.queue = r.queue[1:]
			if it.err != nil {
				r.stats.Errors++
				return Message{}, it.err
			}
			r.stats.Messages++
			return it.msg, nil
		}
		if r.fatal != nil {
			return Message{}, r.fatal
		}
		data, ci, link, err := r.src.next()
		if err != nil {
			if err == io.EOF {
				r.fatal = io.EOF
			} else {
				r.fatal = &ReadError{File: r.name, Frame: r.frame + 1, Err: err}
			}
			continue
		}
		r.frame++
		r.stats.Frames++
		r.ts = ci.Timestamp
		r.queue = r.queue[:0]
		if err := r.decodeFrame(link, data); err != nil {
			r.queue = append(r.queue, item{err: &FrameError{File: r.name, Frame: r.frame, Err: err}})
		}
	}
}

// emit queues a decoded message, stamping it with the current frame.
func (r *Reader) emit(m Message) {
	m.Frame = r.frame
	m.Time = r.ts
	r.queue = append(r.queue, item{msg: m})
}
