// Package mtp2 is a lab signalling link: MTP level 2 signal units (Q.703)
// carried one per datagram over an AF_UNIX SOCK_SEQPACKET socket, the way
// libss7 runs its MTP2 over a file descriptor (link type "DAHDI MTP2"). It
// is for tests and labs against such a process on the same machine, not a
// production E1/T1 link: there is no bit stuffing, no flags, and the two
// octets where the FCS goes are placeholders (zero on send, ignored on
// receive).
//
// codec.go is the signal unit format (Q.703 §2.2-§2.3: BSN/BIB, FSN/FIB,
// LI, status field or SIO and SIF); fsm.go the alignment (Q.703 §7, with
// LSSUs SIO, SIN, SIE, SIOS, SIPO, SIB and proving) and basic error
// correction (Q.703 §5: positive and negative acknowledgement with
// retransmission) on an injectable clock; link.go runs it over the socket.
//
// Nothing is sent continuously: an SU goes out when the state or the
// acknowledgement changes, and LSSUs are repeated on a timer while aligning,
// like libss7 in this mode.
package mtp2
