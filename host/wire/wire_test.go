package wire_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/isup/stack"
)

// The statuses shared with the stack keep the stack's numbers, and every
// stack status has a name here.
func TestStatusesMatchStack(t *testing.T) {
	pairs := map[stack.Status]wire.Status{
		stack.StatusOK: wire.StatusOK, stack.StatusOutboundCongestion: wire.StatusOutboundCongestion,
		stack.StatusNoCircuit: wire.StatusNoCircuit, stack.StatusDestinationUnavailable: wire.StatusDestinationUnavailable,
		stack.StatusUnknownDestination: wire.StatusUnknownDestination, stack.StatusBadRequest: wire.StatusBadRequest,
		stack.StatusUnknownCall: wire.StatusUnknownCall, stack.StatusInvalidState: wire.StatusInvalidState,
		stack.StatusCircuitUnavailable: wire.StatusCircuitUnavailable, stack.StatusShuttingDown: wire.StatusShuttingDown,
		stack.StatusACCThrottled: wire.StatusACCThrottled, stack.StatusConstraintViolation: wire.StatusConstraintViolation,
		stack.StatusDestinationOutOfService: wire.StatusDestinationOutOfService, stack.StatusHighTraffic: wire.StatusHighTraffic,
		stack.StatusNetworkCongestion: wire.StatusNetworkCongestion, stack.StatusContinuityNotSupported: wire.StatusContinuityNotSupported,
		stack.StatusNotAcknowledged: wire.StatusNotAcknowledged,
	}
	for s, w := range pairs {
		if uint16(s) != uint16(w) {
			t.Errorf("%s: stack 0x%04X, wire 0x%04X", s, uint16(s), uint16(w))
		}
	}
	// Any status the stack can name must have a name here too.
	for v := 0; v < 0x0130; v++ {
		if v >= 0x0110 && v < 0x0120 {
			continue // the host API's own
		}
		s := stack.Status(v)
		if !strings.HasPrefix(s.String(), "status 0x") && strings.HasPrefix(wire.Status(v).Name(), "status_0x") {
			t.Errorf("stack status 0x%04X (%s) has no wire name", v, s)
		}
	}
	for _, s := range wire.Statuses {
		if s.Status > 0x012F || s.Status > 0x0010 && s.Status < 0x0101 {
			t.Errorf("status 0x%04X outside the CSP (0x0010, 0x000C), stack (0x0101-0x010F, 0x0120-0x012F) and host (0x0110-0x011F) ranges", uint16(s.Status))
		}
	}
}

// docs/host-api.md documents every request type, status and alarm.
func TestDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/host-api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, typ := range append(append([]string{}, wire.RequestTypes...), wire.TypeAck, wire.TypeNak, wire.TypeIncoming, wire.TypeAnswered, wire.TypeReleased, wire.TypeAlarm, wire.TypeAlarmCleared) {
		if !strings.Contains(doc, "`"+typ+"`") && !strings.Contains(doc, "### "+typ) {
			t.Errorf("message type %s is not documented", typ)
		}
	}
	for _, s := range wire.Statuses {
		row := fmt.Sprintf("| 0x%04X | %d | `%s` | %s |", uint16(s.Status), uint16(s.Status), s.Name, s.Sentence)
		if !strings.Contains(doc, row) {
			t.Errorf("status row missing or different:\n%s", row)
		}
	}
	for _, a := range wire.Alarms {
		row := fmt.Sprintf("| 0x%02X (%d) | %s | %d |", a.Number, a.Number, a.Name, a.Severity)
		if !strings.Contains(doc, row) {
			t.Errorf("alarm row missing or different:\n%s", row)
		}
	}
}
