// Package transport carries SCTP associations for M3UA: one Conn per
// association, message oriented, with a stream identifier and a payload
// protocol identifier on every message.
//
// Three implementations sit behind the same interface:
//
//   - kernel: the operating system's SCTP (ishidawataru/sctp). Many hosts and
//     containers have none; Dial and Listen then fail at once with
//     ErrKernelSCTPUnavailable, which names the alternatives.
//   - udp: userspace SCTP (pion/sctp) encapsulated in UDP (RFC 6951).
//   - raw: the same userspace SCTP directly over IP protocol 132, so the wire
//     carries genuine SCTP. It needs CAP_NET_RAW.
//
// KindAuto picks kernel when the kernel has SCTP and udp otherwise.
//
// pion/sctp was written for WebRTC: it always uses SCTP port 5000 and, as a
// server, refuses an INIT that lists addresses. The wire adapter in this
// package (wire.go) rewrites ports and checksums in both directions and strips
// address parameters, so pion talks to Linux, usrsctp and osmo-stp peers.
//
// The udp and raw listeners keep no state for a peer until it echoes a
// valid State Cookie (RFC 9260 §5.1; gate.go, cookie.go): they check the
// accept filter, then the CRC32c, answer INIT with an INIT ACK whose
// cookie is signed with HMAC-SHA256, and only for a COOKIE ECHO that
// verifies (and is fresh) start a pion association, already established,
// through pion's out-of-band start (SNAP). Every drop is counted
// (ListenerStats) and associations are bounded in all and per address.
package transport
