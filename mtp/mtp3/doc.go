// Package mtp3 is an MTP level 3 signalling point (end node) of Q.704 for
// ITU and T1.111.4 for ANSI, over level 2 links from mtp/m2pa (RFC 4165) or
// mtp/mtp2 (Q.703 signal units on a local socket).
//
// It gives the MTP user the same service as mtp/m3ua: Transfer for
// MTP-TRANSFER requests, Indications for received messages, and Events with
// the mtp package's status indications (Pause, Resume, Restricted,
// Congestion, UserPartUnavailable), so the ISUP stack does not care which
// one carries it.
//
// Inside: linksets towards adjacent signalling points, each with links
// identified by their SLC; routes from a DPC to linksets by priority; load
// sharing by SLS over a linkset's available links, each SLS kept on one
// link; signalling link test (Q.707) at activation and periodically;
// changeover (COO/COA, XCO/XCA, ECO/ECA) with retrieval of the failed link's
// unacknowledged MSUs, and changeback (CBD/CBA), so that a link's failure or
// return neither loses nor reorders what level 2 can still give back;
// traffic restart allowed (TRA) at linkset start; TFP/TFA/TFR/TFC/UPU from
// the adjacent point turned into events.
package mtp3
