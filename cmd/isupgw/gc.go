package main

import "runtime/debug"

// gcPercent is the garbage collector's target when GOGC is not set: the heap
// may grow to five times what is live between collections, instead of Go's
// twice. The gateway allocates for every message (pion/sctp's data path
// most) and keeps little: about 25 MB live at 40000 calls/s, collected ten
// times a second at Go's default, with a heap near 50 MB. Collecting a
// quarter as often left more of the CPU to calls (docs/deployment.md,
// "Memory and the garbage collector"). GOGC in the environment (GOGC=100
// where memory is short) and GOMEMLIMIT still rule.
const gcPercent = 400

// setGC applies gcPercent unless the environment sets GOGC (which the
// runtime has read already). main calls it for every command: the load
// generator and test hosts allocate for every line as the gateway does.
func setGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
