// Package isup is the ISUP wire codec: ITU-T Q.763 and ANSI T1.113 messages and
// parameters. It does no I/O and starts no goroutines.
//
// A message is the MTP3 user part of an MSU: CIC, message type, then the mandatory
// fixed part, the pointers, the mandatory variable part and the optional part.
// The variant (ITU or ANSI) is a property of the signaling relation, so every
// encode and decode names it.
//
// Decoding aliases the input: parameter values and digit strings of a decoded
// message point into the buffer given to Decode. Keep the buffer unchanged for as
// long as the message is used, or encode the message again to get a copy.
//
// Unknown message types decode to *Unknown and unknown optional parameters stay in
// Optional as raw bytes; both re-encode byte-identical, which the compatibility
// procedures of Q.764 §2.9.5 need.
package isup
