// Package capture reads and writes packet captures of SS7 signaling carried
// over IP (M3UA over SCTP, or SCTP over UDP per RFC 6951) and over classic
// links (MTP2 and MTP3 link types).
//
// The Reader turns a pcap or pcapng file into a stream of Messages: one per
// M3UA message (every class and type) or per MTP3 MSU. It understands the
// link layers SS7 captures come with (Ethernet with VLAN tags, raw IP, Linux
// cooked SLL/SLL2, BSD loopback, MTP2, MTP2 with pseudo-header, MTP3), IPv4
// and IPv6, SCTP with bundled and fragmented DATA/I-DATA chunks, RFC 4666
// M3UA and the older draft-6 framing whose Protocol Data holds a raw MSU.
// Headers are parsed by hand with bounds checks: no input makes it panic.
//
// The Writer produces classic pcap files that Wireshark and tshark decode
// with no options: M3UA wrapped in SCTP DATA chunks (valid CRC32c, rising
// TSN/SSN) in IPv4 or IPv6 in Ethernet, SLL or raw IP, optionally SCTP over
// UDP; or MTP3 MSUs on the MTP2 and MTP3 link types. It is safe for
// concurrent use, so the M3UA layer can log all associations to one file.
//
// Out of scope: decoding ISUP itself (see package isup), TCP-based
// signaling, M2UA/M2PA/SUA framing, and IP fragment reassembly (fragmented
// datagrams are skipped and counted in Stats).
package capture
