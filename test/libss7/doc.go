// Package libss7 runs farend, a far-end exchange built on the system's
// libss7 (an independent ITU and ANSI ISUP stack with its own MTP2 and
// MTP3), so tests can check what a stack nobody here wrote sees and sends.
//
// farend/farend.c is a GPL-2 test program (see farend/README.md); isupgw
// never links it. This package compiles it with gcc at test time (Build)
// and talks to it through its command line, its stdin (script mode) and the
// JSON lines it prints (Log, Event).
//
// # Using it as isupgw's peer
//
// An integration test puts isupgw's MTP2 link (Q.703 signal units over
// SOCK_SEQPACKET, one unit per datagram, two FCS placeholder octets) on the
// other end of farend's socket:
//
//	bin := libss7.Build(t) // skips without gcc/libss7-dev
//	far, conn := libss7.StartPeerConn(t, bin, libss7.Config{
//		Variant: "itu", OPC: "1", DPC: "2", CICs: "1-31", // DPC: isupgw's point code
//		Mode: []string{"script", "-"},
//		Args: []string{"--wire"},
//	})
//	// hand conn (or StartPeer's *os.File) to isupgw's MTP2 link, with its own
//	// point code 2, adjacent point code 1, SLC 0, NI national, same CICs
//	if _, err := far.Log().Wait(15*time.Second, libss7.Msg("local", "READY", -1)); err != nil {
//		t.Fatal(err) // alignment, SLTM/SLTA both ways, TRA both ways, GRS answered
//	}
//	mark := far.Log().Mark()
//	far.Command("cgb 1 7 hw")
//	far.Log().WaitAfter(mark, 5*time.Second, libss7.Msg("rx", "CGBA", 1))
//
// What libss7 needs from the other side before READY: MTP2 alignment
// answered (libss7 sends each LSSU once, not continuously, and an idle link
// is silent: no FISUs unless an acknowledgement is due), every MSU
// acknowledged within its T7 (1.25 s), an SLTA for its SLTM (ITU SI 1,
// ANSI SI 2 with the SLC in the length octet; it answers an SLTM too), TRA
// (without one it waits for its T21, 64 s here), and
// MSUs whose DPC is farend's OPC and whose NI matches; link management must
// come from the adjacent point code with the SLC in the SLS field. Then
// farend sends GRS over its circuits (ANSI: each GRS twice, each wanting
// its own GRA) and answers isupgw's. READY comes when farend's own GRS is
// answered; pass --await-grs when isupgw sends a start-up GRS too, or a call
// placed at READY can be reset by isupgw's GRS arriving after it.
//
// # isupgw against libss7
//
// The TestISUPGW* tests run isupgw in this test binary (internal/app, the
// code behind `isupgw run`) with an mtp3 section whose only link is an
// mtp2-lab-socket listening on a path; the test dials that path and hands
// the connected socket to farend as its fd 3, so the configuration path an
// operator uses is the one tested. Hosts use the host API (host/client);
// isupgw's own supervision requests go through the stack's Go API
// (stack.Maintenance). Each test checks, in ITU and ANSI: link up and both
// start-up GRS answered (TestISUPGWCalls), 100 calls each way with digits,
// NAI and causes (TestISUPGWCalls), CPG, SUS/RES and releases by either
// side before and after answer (TestISUPGWReleases), UCIC, BLO/UBL,
// CGB/CGU maintenance and hardware with ranges each way, CQM/CQR states,
// RSC and GRS each way during calls (TestISUPGWSupervision), and dual
// seizure on an even and an odd CIC (TestISUPGWGlare).
//
// Not covered, by libss7's API: ACL in a REL (libss7's REL carries only a
// cause and skips a received ACL), CQM from libss7 (it has no function to
// send one). Logged, not failed: libss7's "Got ANM but we didn't send IAM"
// for its calls that went through farend's glare path, and "Requested free
// an unlinked call" when farend answers a CQM with a call up in its range
// (libss7/farend call-structure handling; isupgw sent ACM then ANM as
// Q.764 2.1.4-2.1.7 has it).
//
// Modes: "answer" (farend answers isupgw's calls; --answer, --cpg, --hold,
// --acm-delay/--anm-delay shape them), {"originate", N, RATE} (farend calls
// isupgw; DONE reports the counts) and {"script", "-"} (Farend.Command: call,
// rel, blo, ubl, cgb, cgu, rsc, grs, glare, sus, res, cpg, ucic, ...). EXIT's
// counters ("rx", "tx", "wire_rx", "wire_tx" by message name, "errors",
// "unexpected") tell whether libss7 saw anything it did not expect.
package libss7
