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
package transport
