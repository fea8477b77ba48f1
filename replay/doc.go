// Package replay reads captures of ISUP signaling (any link type the
// mtp/capture Reader understands), follows every circuit through the Q.764
// call and circuit-supervision procedures, and replays one side of a capture
// against a live gateway over M3UA.
//
// The pieces:
//
//   - Load turns a pcap or pcapng file into ISUP messages (Msg) with their
//     frame numbers, timestamps and routing labels.
//   - Analyzer is a passive procedure checker. It keeps the state of every
//     circuit, identified by the two point codes and the CIC, as both
//     exchanges see it: calls (IAM, SAM, COT, ACM, CPG, CON, ANM, SUS/RES,
//     REL/RLC) and circuit supervision (RSC, GRS/GRA, BLO/BLA, UBL/UBA,
//     CGB/CGBA, CGU/CGUA, CQM/CQR, CFN, UCIC). Each message that does not fit
//     is a Violation with its frame number. It also counts calls, answers
//     and release causes for the summary.
//   - WriteFlow and WriteSummary print what the isupgw replay command shows.
//   - Live acts as the exchange at one point code of a capture: it dials a
//     gateway over M3UA, sends that side's messages with the original timing
//     (scaled, or as fast as per-CIC causality allows) and compares what the
//     gateway answers on each CIC with what the other side did in the capture.
//
// A capture may start or end in the middle of calls: a circuit's first
// message is taken as it comes (a call begun before the capture, an
// acknowledgement of a request sent earlier), and only what follows is
// checked against the procedures.
package replay
