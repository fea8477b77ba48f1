package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/isupgw/isupgw/host/wire"
)

// Maintenance names circuits for block, unblock, reset and query: a point code
// or a circuit group by name, and CIC..Last (Last 0: CIC alone).
type Maintenance struct {
	DPC      uint32 `json:"dpc,omitempty"`
	Route    string `json:"route,omitempty"`
	CIC      int    `json:"cic"`
	Last     int    `json:"last,omitempty"`
	Hardware bool   `json:"hardware,omitempty"`
}

// MaintenanceResult is the ack of a maintenance request: the far end
// acknowledged (a nak, as *Nak, says it did not in time, or why nothing was sent).
type MaintenanceResult struct {
	Op       string         `json:"op"`
	Sent     string         `json:"sent"` // BLO, UBL, CGB, CGU, RSC, GRS or CQM
	Ack      string         `json:"ack"`  // BLA, UBA, CGBA, CGUA, RLC, GRA or CQR
	WaitedMS int64          `json:"waited_ms"`
	States   []QueriedState `json:"states,omitempty"`
}

// QueriedState is one circuit of a CQR.
type QueriedState struct {
	CIC   uint16 `json:"cic"`
	Coded string `json:"coded"`
	State string `json:"state"`
}

// Maintain sends block, unblock, reset or query (wire.TypeBlock ...) and
// waits for the far end's acknowledgement, which may take the repeat timer
// (T12 and the like, 15 s by default): give ctx room for it.
func (c *Client) Maintain(ctx context.Context, op string, m Maintenance) (MaintenanceResult, error) {
	msg, err := c.Do(ctx, struct {
		Type string `json:"type"`
		Maintenance
	}{op, m})
	if err != nil {
		return MaintenanceResult{}, err
	}
	var r MaintenanceResult
	err = remarshal(msg.Data, &r)
	return r, err
}

// CircuitFilter selects circuits for Circuits (zero fields: all).
type CircuitFilter struct {
	DPC   uint32 `json:"dpc,omitempty"`
	Group string `json:"group,omitempty"`
	CIC   int    `json:"cic,omitempty"`
	Last  int    `json:"last,omitempty"`
	State string `json:"state,omitempty"`
}

// Circuit is one row of the circuits answer.
type Circuit struct {
	Group     string `json:"group"`
	DPC       uint32 `json:"dpc"`
	CIC       uint16 `json:"cic"`
	State     string `json:"state"`
	Local     string `json:"local,omitempty"`  // maintenance, hardware or both
	Remote    string `json:"remote,omitempty"` // same, blocked by the far end
	Awaiting  string `json:"awaiting,omitempty"`
	Call      uint64 `json:"call,omitempty"`
	Direction string `json:"direction,omitempty"` // in or out
	InStateMS int64  `json:"in_state_ms"`
}

// GroupSummary counts one circuit group's circuits.
type GroupSummary struct {
	Group           string `json:"group"`
	DPC             uint32 `json:"dpc"`
	Total           int    `json:"total"`
	Idle            int    `json:"idle"`
	Outgoing        int    `json:"outgoing"`
	Incoming        int    `json:"incoming"`
	Releasing       int    `json:"releasing"`
	LocallyBlocked  int    `json:"locally_blocked"`
	RemotelyBlocked int    `json:"remotely_blocked"`
	Awaiting        int    `json:"awaiting"`
}

// Circuits lists the circuits the filter selects (asking page after page) and
// every selected group's summary.
func (c *Client) Circuits(ctx context.Context, f CircuitFilter) ([]Circuit, []GroupSummary, error) {
	var all []Circuit
	var groups []GroupSummary
	offset := 0
	for pages := 0; pages < 10000; pages++ {
		msg, err := c.Do(ctx, struct {
			Type string `json:"type"`
			CircuitFilter
			Offset int `json:"offset,omitempty"`
		}{wire.TypeCircuits, f, offset})
		if err != nil {
			return nil, nil, err
		}
		var page struct {
			Circuits []Circuit      `json:"circuits"`
			Groups   []GroupSummary `json:"groups"`
			Next     int            `json:"next"`
		}
		if err := remarshal(msg.Data, &page); err != nil {
			return nil, nil, err
		}
		all, groups = append(all, page.Circuits...), page.Groups
		if page.Next <= offset {
			return all, groups, nil
		}
		offset = page.Next
	}
	return nil, nil, fmt.Errorf("client: circuits: too many pages")
}

// remarshal turns an ack's decoded data into a typed value.
func remarshal(data map[string]any, v any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// TraceFilter selects the calls a trace shows (zero fields: all).
type TraceFilter struct {
	DPC    uint32 `json:"dpc,omitempty"`
	CIC    int    `json:"cic,omitempty"`
	Called string `json:"called,omitempty"` // called number prefix
}

// Trace starts a call trace on this connection: its lines then arrive on
// Events (read them with TraceText) until the connection closes.
func (c *Client) Trace(ctx context.Context, f TraceFilter) error {
	_, err := c.Do(ctx, struct {
		Type string `json:"type"`
		TraceFilter
	}{wire.TypeTrace, f})
	return err
}

// TraceText returns the line of a trace event (ok false for any other event).
func TraceText(e Event) (string, bool) {
	u, ok := e.(*Unsolicited)
	if !ok || u.Message.Type != wire.TypeTrace {
		return "", false
	}
	return u.Message.Text, true
}
