package host

import (
	"github.com/isupgw/isupgw/mtp"
	"testing"

	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/isup/stack"
)

func TestMaintenanceRequestChecks(t *testing.T) {
	n := func(v int) *int { return &v }
	pc := pcField{num: 2, hasNum: true}
	dashed, number, bad := pcField{text: "0-0-2"}, pcField{text: "2"}, pcField{text: "0-300-2"}
	for _, c := range []struct {
		typ  string
		r    maintRequest
		want wire.Status // 0: accepted
		req  stack.Maintenance
	}{
		{wire.TypeBlock, maintRequest{DPC: &pc, CIC: n(1), Last: n(8)}, 0, stack.Maintenance{Op: stack.OpBlock, DPC: 2, CIC: 1, Range: 7}},
		{wire.TypeUnblock, maintRequest{Route: "b", CIC: n(3), Hardware: true}, 0, stack.Maintenance{Op: stack.OpUnblock, Route: "b", CIC: 3, Hardware: true}},
		{wire.TypeReset, maintRequest{DPC: &pc, CIC: n(5)}, 0, stack.Maintenance{Op: stack.OpReset, DPC: 2, CIC: 5}},
		{wire.TypeQuery, maintRequest{DPC: &pc, CIC: n(1), Last: n(32)}, 0, stack.Maintenance{Op: stack.OpQuery, DPC: 2, CIC: 1, Range: 31}},
		{wire.TypeQuery, maintRequest{DPC: &pc, CIC: n(1), Last: n(33)}, wire.StatusBadValue, stack.Maintenance{}},
		{wire.TypeBlock, maintRequest{DPC: &pc, CIC: n(5), Last: n(4)}, wire.StatusBadValue, stack.Maintenance{}},
		{wire.TypeBlock, maintRequest{CIC: n(5)}, wire.StatusMissingField, stack.Maintenance{}},
		{wire.TypeBlock, maintRequest{DPC: &pc}, wire.StatusMissingField, stack.Maintenance{}},
		{wire.TypeBlock, maintRequest{DPC: &pc, CIC: n(70000)}, wire.StatusBadValue, stack.Maintenance{}},
		{wire.TypeReset, maintRequest{DPC: &pc, CIC: n(5), Hardware: true}, wire.StatusBadValue, stack.Maintenance{}},
		// Point codes as text: the configured dashed form (3-8-3 here) or a number.
		{wire.TypeBlock, maintRequest{DPC: &dashed, CIC: n(1)}, 0, stack.Maintenance{Op: stack.OpBlock, DPC: 2, CIC: 1}},
		{wire.TypeBlock, maintRequest{DPC: &number, CIC: n(1)}, 0, stack.Maintenance{Op: stack.OpBlock, DPC: 2, CIC: 1}},
		{wire.TypeBlock, maintRequest{DPC: &bad, CIC: n(1)}, wire.StatusBadValue, stack.Maintenance{}},
	} {
		req, rf := maintenanceRequest(c.typ, c.r, mtp.PointCodeFormat{Dashed: true})
		switch {
		case c.want == 0 && rf != nil:
			t.Errorf("%s %+v refused: %v", c.typ, c.r, rf)
		case c.want == 0 && req != c.req:
			t.Errorf("%s: request %+v, want %+v", c.typ, req, c.req)
		case c.want != 0 && (rf == nil || rf.status != c.want):
			t.Errorf("%s %+v: %v, want %s", c.typ, c.r, rf, c.want)
		}
	}
}
