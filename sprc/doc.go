// Package sprc is congestion and admission control: the Signaling Procedure
// Control of the CSP, the overload policies of the Oracle SBC session agents and
// Cisco's call throttling, in one place. It decides; the stack and the gateway
// act. It holds no sockets and reads time only through the clock it is given,
// so every threshold is tested on a fake clock.
//
// Own congestion, per direction (inbound, outbound), from queue probes:
//
//	          probe >= L1Delay or avg >= L1Average
//	+------+ ---------------------------------------> +---------+
//	| none |                                          | level 1 |
//	+------+ <--------------------------------------- +---------+
//	   |  ^        avg < ClearAverage                  |      ^
//	   |  |                 probe >= 12 s or avg >= 6 s |      | neither level-2
//	   |  |                                             v      | condition holds
//	   |  |    avg < ClearAverage                     +---------+
//	   |  +------------------------------------------ | level 2 |
//	   +--------------------------------------------> +---------+
//	       probe >= 12 s or avg >= 6 s
//
// Outbound level 1 or 2 refuses an outseize (0x0C) before any IAM. Inbound
// level 1 releases new IAMs with cause 42 and ACL; inbound level 2 drops IAM and
// SAM at the edge after reading only their type. Every REL carries the ACL
// while the own level or the hosts' declared overload is 1 or more.
//
// Code Yellow (Cisco): after SampleSize seconds of consecutive non-zero
// latency, the average probe delay is compared with the entry latency; above
// it, new calls are refused ("high traffic, try later") until the average falls
// to ExitPercent of the entry latency. Code Yellow lasting longer than
// Duration is Code Red: the gateway dumps profiles and exits to be restarted.
//
//	+--------+ avg > entry   +--------+  longer than Duration  +-----+
//	| normal | ------------> | yellow | ---------------------> | red |
//	+--------+ <------------ +--------+                        +-----+
//	            avg <= exit% of entry
//
// Per destination (point code): automatic congestion control from received
// ACL, MTP congestion (SCON) handled in steps with T29/T30 (Q.764 §2.10),
// constraints on concurrent calls and call rates, and availability (out of
// service after failed attempts, back after a time or an answered ping).
package sprc
