// Package fault is the fault-injection suite of issue 14: it builds the real
// isupgw binary, runs two gateways as processes on loopback (M3UA over SCTP
// over UDP) and breaks them: the peer killed (SIGKILL) and hung (SIGSTOP),
// an SCTP INIT flood, a forged ASP Up, idle host connections that never say
// hello and a flooding host. Each test asserts the outcome the issue asks for
// and logs its figures (detection times, memory, refusals). The tests are in
// fault_test.go; this package has no code of its own.
package fault
