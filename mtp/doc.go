// Package mtp is the MTP service the ISUP stack uses: MTP-TRANSFER requests
// and indications with the full routing label, and typed status indications
// (pause, resume, restricted, congestion, user part unavailable).
//
// The package holds the service types, the routing table that maps a
// destination point code to the associations that reach it, and the SLS
// rules that keep per-SLS order. The M3UA endpoint that implements the
// service over SCTP is in mtp/m3ua; the SCTP transports are in
// mtp/transport. The ISUP layer stays out: the MTP user hands over bytes.
package mtp
