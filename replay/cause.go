package replay

import "strconv"

// causeNames are the Q.850 cause values seen in ISUP traffic.
var causeNames = map[uint8]string{
	1: "unallocated number", 2: "no route to network", 3: "no route to destination",
	4: "send special information tone", 5: "misdialled trunk prefix", 6: "channel unacceptable",
	8: "preemption", 16: "normal call clearing", 17: "user busy", 18: "no user responding",
	19: "no answer", 20: "subscriber absent", 21: "call rejected", 22: "number changed",
	23: "redirection to new destination", 25: "exchange routing error", 26: "non-selected user clearing",
	27: "destination out of order", 28: "address incomplete", 29: "facility rejected",
	31: "normal, unspecified", 34: "no circuit available", 38: "network out of order",
	41: "temporary failure", 42: "switching equipment congestion", 43: "access information discarded",
	44: "requested circuit not available", 46: "precedence call blocked", 47: "resource unavailable",
	50: "facility not subscribed", 55: "incoming calls barred in CUG", 57: "bearer capability not authorized",
	58: "bearer capability not available", 63: "service or option not available",
	65: "bearer capability not implemented", 69: "facility not implemented",
	79: "service or option not implemented", 87: "user not member of CUG", 88: "incompatible destination",
	91: "invalid transit network", 95: "invalid message", 97: "message type non-existent",
	99: "parameter non-existent, discarded", 101: "message not compatible with call state",
	102: "recovery on timer expiry", 103: "parameter non-existent, passed on",
	110: "message with unrecognized parameter, discarded", 111: "protocol error", 127: "interworking",
}

// CauseName is the Q.850 name of a cause value, or "cause N".
func CauseName(v uint8) string {
	if s, ok := causeNames[v]; ok {
		return s
	}
	return "cause " + strconv.Itoa(int(v))
}
