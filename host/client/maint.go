package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/mtp"
)

// PointCode is a point code as the CLI takes it: a number ("2"), or as a
// configuration writes it ("2-100-3" for ITU 3-8-3, "1-2-3" for ANSI 8-8-8),
// which the client resolves against the gateway's circuit groups (their
// variant says which way it is meant) before sending the number. "" is none.
type PointCode string

// MarshalJSON sends the number (a PointCode not yet resolved is an error).
func (p PointCode) MarshalJSON() ([]byte, error) {
	if _, err := strconv.ParseUint(string(p), 10, 32); err != nil {
		return nil, fmt.Errorf("client: point code %q not resolved to a number", string(p))
	}
	return []byte(p), nil
}

// ResolvePointCode turns a written point code (a number, or 3-8-3 / 8-8-8)
// into its number, asking the gateway for its circuit groups when the text
// is not a number: their variants say which structure is meant.
func (c *Client) ResolvePointCode(ctx context.Context, p PointCode) (uint32, error) {
	r, err := c.resolve(ctx, p)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(string(r), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not a point code", string(p))
	}
	return uint32(v), nil
}

// resolve turns a written point code into its number, asking the gateway for
// its groups when the text is not a number.
func (c *Client) resolve(ctx context.Context, p PointCode) (PointCode, error) {
	if p == "" {
		return p, nil
	}
	if _, err := strconv.ParseUint(string(p), 10, 32); err == nil {
		return p, nil
	}
	// The text is read both ways; the gateway's groups say which variant
	// (and so which reading) is meant.
	itu, errITU := mtp.PointCodeFormat{}.Parse(string(p))
	ansi, errANSI := mtp.PointCodeFormat{ANSI: true}.Parse(string(p))
	if errITU != nil && errANSI != nil {
		return "", fmt.Errorf("%q is not a point code (a number, 3-8-3 for ITU or 8-8-8 for ANSI)", string(p))
	}
	okITU, okANSI := errITU == nil, errANSI == nil
	msg, err := c.Do(ctx, map[string]any{"type": wire.TypeCircuits, "summary": true})
	if err != nil {
		return "", err
	}
	var page struct {
		Groups []struct {
			DPC     uint32 `json:"dpc"`
			Variant string `json:"variant"`
		} `json:"groups"`
	}
	if err := remarshal(msg.Data, &page); err != nil {
		return "", err
	}
	found := map[uint32]bool{}
	for _, g := range page.Groups {
		if okITU && g.Variant == "itu" && g.DPC == uint32(itu) || okANSI && g.Variant == "ansi" && g.DPC == uint32(ansi) {
			found[g.DPC] = true
		}
	}
	for pc := range found {
		if len(found) > 1 {
			return "", fmt.Errorf("point code %q names several circuit groups; give the number", string(p))
		}
		return PointCode(strconv.FormatUint(uint64(pc), 10)), nil
	}
	return "", fmt.Errorf("no circuit group of the gateway has point code %s", string(p))
}

// Maintenance names circuits for block, unblock, reset and query: a point code
// or a circuit group by name, and CIC..Last (Last 0: CIC alone).
type Maintenance struct {
	DPC      PointCode `json:"dpc,omitempty"`
	Route    string    `json:"route,omitempty"`
	CIC      int       `json:"cic"`
	Last     int       `json:"last,omitempty"`
	Hardware bool      `json:"hardware,omitempty"`
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
	var err error
	if m.DPC, err = c.resolve(ctx, m.DPC); err != nil {
		return MaintenanceResult{}, err
	}
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
	DPC   PointCode `json:"dpc,omitempty"`
	Group string    `json:"group,omitempty"`
	CIC   int       `json:"cic,omitempty"`
	Last  int       `json:"last,omitempty"`
	State string    `json:"state,omitempty"`
	// Summary asks for the group summaries only (no rows).
	Summary bool `json:"summary,omitempty"`
}

// Circuit is one row of the circuits answer.
type Circuit struct {
	Group     string `json:"group"`
	DPC       uint32 `json:"dpc"`
	PC        string `json:"pc"` // DPC as the gateway's configuration writes it
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
	PC              string `json:"pc"` // DPC as the gateway's configuration writes it
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
	var err error
	if f.DPC, err = c.resolve(ctx, f.DPC); err != nil {
		return nil, nil, err
	}
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
	DPC    PointCode `json:"dpc,omitempty"`
	CIC    int       `json:"cic,omitempty"`
	Called string    `json:"called,omitempty"` // called number prefix
}

// Trace starts a call trace on this connection: its lines then arrive on
// Events (read them with TraceText) until the connection closes.
func (c *Client) Trace(ctx context.Context, f TraceFilter) error {
	var err error
	if f.DPC, err = c.resolve(ctx, f.DPC); err != nil {
		return err
	}
	_, err = c.Do(ctx, struct {
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
