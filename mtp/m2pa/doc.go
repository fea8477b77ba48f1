// Package m2pa is an M2PA signalling link (RFC 4165): SS7 MTP2 user peer
// adaptation over one SCTP association, giving MTP3 the link service of
// Q.703 (alignment, proving, in-service transfer with acknowledgement,
// retrieval of unacknowledged messages for changeover).
//
// codec.go encodes and decodes the messages of RFC 4165 §2; fsm.go is the
// link state machine of RFC 4165 §4 on an injectable clock; link.go runs it
// over a transport.Conn from mtp/transport, as client (dialling) or server
// (accepting on its own listener).
package m2pa
