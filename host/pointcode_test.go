package host

import (
	"strings"
	"testing"

	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/mtp"
)

// TestDashedPointCodeReadWithItsGroupsVariant: in a gateway with ITU and
// ANSI groups, "1-10-2" is the ITU group's 2130 or the ANSI group's 68098,
// whichever group exists; naming one of each is refused with both numbers.
func TestDashedPointCodeReadWithItsGroupsVariant(t *testing.T) {
	const itu, ansi = mtp.PointCode(1<<11 | 10<<3 | 2), mtp.PointCode(1<<16 | 10<<8 | 2)
	top := mtp.PointCodeFormat{Dashed: true} // top-level variant ITU
	for _, c := range []struct {
		name  string
		dests []Destination
		text  string
		want  mtp.PointCode
		err   string
	}{
		{"ITU only", []Destination{{DPC: itu}}, "1-10-2", itu, ""},
		{"ANSI group in an ITU gateway", []Destination{{DPC: 2129}, {DPC: ansi, ANSI: true}}, "1-10-2", ansi, ""},
		{"ITU group beside ANSI ones", []Destination{{DPC: itu}, {DPC: 5, ANSI: true}}, "1-10-2", itu, ""},
		{"names neither: the configured format", []Destination{{DPC: 7}, {DPC: 5, ANSI: true}}, "1-10-2", itu, ""},
		{"names one of each", []Destination{{DPC: itu}, {DPC: ansi, ANSI: true}}, "1-10-2", 0, "give the number"},
		{"a number is a number", []Destination{{DPC: itu}, {DPC: ansi, ANSI: true}}, "68098", ansi, ""},
		{"too wide for ITU, no ANSI group", []Destination{{DPC: itu}, {DPC: 5, ANSI: true}}, "1-300-2", 0, "does not fit"},
	} {
		got, err := newPointCodes(top, c.dests).Parse(c.text)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %q gave %d, %v; want an error saying %q", c.name, c.text, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: %q gave %d, %v; want %d", c.name, c.text, got, err, c.want)
		}
	}

	// Through the request decoder: the ambiguous code is bad_value.
	pcs := newPointCodes(top, []Destination{{DPC: itu}, {DPC: ansi, ANSI: true}})
	if _, rf := decodeRequest([]byte(`{"type":"outseize","seq":1,"dpc":"1-10-2","called":"123"}`), pcs); rf == nil || rf.status != wire.StatusBadValue {
		t.Fatalf("ambiguous dashed dpc: %+v, want bad_value", rf)
	}
	pcs = newPointCodes(top, []Destination{{DPC: 2129}, {DPC: ansi, ANSI: true}})
	d, rf := decodeRequest([]byte(`{"type":"outseize","seq":1,"dpc":"1-10-2","called":"123"}`), pcs)
	if rf != nil {
		t.Fatalf("ANSI group's dashed dpc refused: %+v", rf)
	}
	if o := d.out; d.typ != wire.TypeOutseize || o.DPC != ansi {
		t.Fatalf("decoded %+v, want an outseize to %d", d.out, ansi)
	}
}
