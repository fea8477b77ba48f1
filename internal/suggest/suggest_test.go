package suggest

import "testing"

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"run", "run", 0}, {"rn", "run", 1}, {"pointcode", "point_code", 1},
		{"stauts", "status", 2}, {"", "abc", 3}, {"kitten", "sitting", 3},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestNearest(t *testing.T) {
	known := []string{"point_code", "network_indicator", "variant", "m3ua", "circuit_groups", "timers"}
	for _, tc := range []struct{ s, want string }{
		{"pointcode", "point_code"},
		{"point-code", "point_code"},
		{"circuit_group", "circuit_groups"},
		{"varient", "variant"},
		{"timer", "timers"},
		{"m2pa", "m3ua"},
		{"congestion", ""}, // nothing close: no guess
		{"x", ""},
	} {
		if got := Nearest(tc.s, known); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
}
