package host_test

import (
	"errors"
	"testing"

	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
)

// A listing longer than one answer comes page by page, every circuit once,
// each answer line well under MaxLine; maintenance naks name the problem.
func TestCircuitsPagesAndMaintenanceNaks(t *testing.T) {
	a, _ := startPair(t, pairOpts{circuits: 700})
	h := a.dial(t, "unix", client.Config{App: "ops"})
	rows, groups, err := h.Circuits(ctx10(t), client.CircuitFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 704 || len(groups) != 2 || groups[0].Total != 700 || groups[1].Total != 4 {
		t.Fatalf("%d rows, groups %+v; want 704 rows in groups of 700 and 4", len(rows), groups)
	}
	for i := range 700 {
		if r := rows[i]; r.Group != "peer" || int(r.CIC) != i+1 || r.State != "idle" {
			t.Fatalf("row %d: %+v", i, r)
		}
	}
	some, _, err := h.Circuits(ctx10(t), client.CircuitFilter{Group: "peer", CIC: 10, Last: 19})
	if err != nil || len(some) != 10 || some[0].CIC != 10 {
		t.Fatalf("CICs 10-19: %d rows, %v", len(some), err)
	}
	for _, c := range []struct {
		op   string
		m    client.Maintenance
		want wire.Status
	}{
		{wire.TypeBlock, client.Maintenance{Route: "nosuch", CIC: 1}, wire.StatusUnknownDestination},
		{wire.TypeBlock, client.Maintenance{DPC: "2", CIC: 701}, wire.StatusCircuitUnavailable},
		{wire.TypeReset, client.Maintenance{DPC: "2", CIC: 1, Last: 40}, wire.StatusBadValue},
		{wire.TypeQuery, client.Maintenance{CIC: 1}, wire.StatusMissingField},
	} {
		_, err := h.Maintain(ctx10(t), c.op, c.m)
		var nak *client.Nak
		if !errors.As(err, &nak) || nak.Status != c.want {
			t.Errorf("%s %+v: %v, want nak %s", c.op, c.m, err, c.want)
		}
	}
	if _, _, err := h.Circuits(ctx10(t), client.CircuitFilter{State: "sleepy"}); err == nil {
		t.Error("an unknown state filter was accepted")
	}
}
