// Package m3ua is an M3UA (RFC 4666) endpoint over SCTP: the ASP, IPSP
// (single and double exchange) and SG-listener roles, their state machines
// with T(ack) retransmission and heartbeat, SSNM turned into typed MTP
// indications, ERR handling for bad input, and MTP-TRANSFER routed by DPC
// over associations with SLS-based stream and association selection.
//
// go-m3ua's messages package is the codec. Its Conn is not used: it serves
// one DPC per connection, drops the routing label on read and ignores SSNM.
// DATA, the hot path, is encoded and decoded here without allocations
// beyond the payload; tests and the fuzz target check it against the
// messages package byte for byte.
package m3ua
