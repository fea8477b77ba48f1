package capture

// LinkType is a pcap link-layer header type (LINKTYPE_* value).
type LinkType uint32

// Link types the Reader understands. The Writer supports LinkEthernet,
// LinkRaw, LinkIPv4, LinkIPv6, LinkSLL, LinkMTP2 and LinkMTP3.
const (
	LinkNull         LinkType = 0   // BSD loopback, host byte order AF
	LinkEthernet     LinkType = 1   // Ethernet II, optionally 802.1Q tagged
	LinkRawDLT12     LinkType = 12  // raw IP (DLT_RAW on some BSDs)
	LinkRawDLT14     LinkType = 14  // raw IP (DLT_RAW on OpenBSD)
	LinkRaw          LinkType = 101 // raw IPv4 or IPv6
	LinkLoop         LinkType = 108 // OpenBSD loopback, network byte order AF
	LinkSLL          LinkType = 113 // Linux cooked capture v1
	LinkMTP2WithPHDR LinkType = 139 // MTP2 with 4-octet pseudo-header
	LinkMTP2         LinkType = 140 // MTP2 (Q.703) frames without FCS
	LinkMTP3         LinkType = 141 // MTP3 MSU starting with the SIO
	LinkIPv4         LinkType = 228 // raw IPv4
	LinkIPv6         LinkType = 229 // raw IPv6
	LinkSLL2         LinkType = 276 // Linux cooked capture v2
)

// DefaultSCTPOverUDPPort is the RFC 6951 UDP port for encapsulated SCTP.
const DefaultSCTPOverUDPPort = 9899

// Option configures a Reader or a Writer. Each option says which it affects;
// options that do not apply are ignored.
type Option func(*config)

type config struct {
	ansi       bool
	udpPort    uint16
	udp        bool // writer: wrap SCTP in UDP
	link       LinkType
	verifyCRC  bool
	mtp2Ext    bool
	mtp2FCS    bool
	maxReasm   int
	nanosecond bool
	name       string
}

func newConfig(opts []Option) config {
	c := config{
		udpPort:    DefaultSCTPOverUDPPort,
		link:       LinkEthernet,
		maxReasm:   1 << 20,
		nanosecond: true,
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithANSI selects the ANSI T1.111 routing label (24-bit point codes,
// DPC(3) OPC(3) SLS(1)) instead of the ITU Q.704 one (14-bit point codes in
// 4 octets) for MSUs on MTP2/MTP3 links and in draft M3UA. Reader and
// Writer. RFC 4666 M3UA carries point codes in 32-bit fields and is not
// affected.
func WithANSI(ansi bool) Option { return func(c *config) { c.ansi = ansi } }

// WithSCTPOverUDP sets the UDP port that carries SCTP (RFC 6951). Reader:
// UDP datagrams to or from this port are decoded as SCTP (default 9899, on
// even without this option). Writer: wrap every SCTP packet in UDP with this
// port as source and destination (default: SCTP directly in IP).
func WithSCTPOverUDP(port uint16) Option {
	return func(c *config) { c.udpPort, c.udp = port, true }
}

// WithLinkType sets the Writer's link type (default LinkEthernet with fake
// MAC addresses, which every tool decodes without options).
func WithLinkType(l LinkType) Option { return func(c *config) { c.link = l } }

// WithCRCCheck makes the Reader drop SCTP packets whose CRC32c is wrong.
// Off by default because captures taken on the sending host often carry
// checksums zeroed by offload; Stats.BadCRC counts them either way.
func WithCRCCheck(drop bool) Option { return func(c *config) { c.verifyCRC = drop } }

// WithMTP2ExtendedSeq makes the Reader expect Q.703 Annex A MTP2 headers
// (12-bit sequence numbers, 6-octet header) on LinkMTP2. On
// LinkMTP2WithPHDR the pseudo-header says so per frame.
func WithMTP2ExtendedSeq(ext bool) Option { return func(c *config) { c.mtp2Ext = ext } }

// WithMTP2FCS tells the Reader that MTP2 frames end with a 2-octet FCS, as
// some capture hardware delivers them.
func WithMTP2FCS(fcs bool) Option { return func(c *config) { c.mtp2FCS = fcs } }

// WithMaxReassembly bounds the size of a reassembled SCTP user message
// (default 1 MiB); larger ones are dropped and counted.
func WithMaxReassembly(n int) Option { return func(c *config) { c.maxReasm = n } }

// WithMicroseconds makes the Writer use the microsecond pcap format instead
// of the nanosecond one.
func WithMicroseconds() Option { return func(c *config) { c.nanosecond = false } }

// WithFileName names the input in the errors of a Reader made by NewReader
// (Open uses the path it was given), so that a caller reading through its
// own io.Reader, e.g. to show progress, still gets "capture: FILE: frame N".
func WithFileName(name string) Option { return func(c *config) { c.name = name } }
