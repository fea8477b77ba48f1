// Package stack is the ISUP stack: circuit groups, per-circuit call and
// maintenance state machines (Q.764, with the ANSI differences), ISUP timers,
// circuit supervision, glare, the compatibility procedures and the reaction to
// MTP indications.
//
// All state belongs to one core that is driven by three kinds of input:
// ISUP messages from the MTP, requests from host applications, and timer
// expiries. The core is synchronous and deterministic, so its tests drive it
// with a fake clock. Stack wraps it in one goroutine with an inbound queue
// (MTP) and an outbound queue (host requests); both accept probes that measure
// how long a message waits, which is what congestion control is built on.
package stack
