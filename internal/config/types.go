package config

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
)

// errAt is an error at a node's line. It is a *yaml.TypeError so that the
// decoder records it and goes on: a check reports every error in the file,
// not only the first. Parse adds the file name and the field path.
func errAt(n *yaml.Node, format string, a ...any) error {
	// The column tells apart the fields of a one-line mapping ({t1: 1s, t7: 2s}).
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d col %d: %s", n.Line, n.Column, fmt.Sprintf(format, a...))}}
}

// scalar reads a node that must be a single value.
func scalar(n *yaml.Node, want string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", errAt(n, "want %s, got a %s", want, kindName(n.Kind))
	}
	return n.Value, nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

// Duration is a Go duration string: "500ms", "15s", "5m".
type Duration time.Duration

func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n, "a duration like 500ms, 15s or 5m")
	if err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return errAt(n, "%q is not a duration (want e.g. 500ms, 15s, 5m)", s)
	}
	*d = Duration(v)
	return nil
}

// PointCode is a number, or zone-area-id (ITU 3-8-3) / network-cluster-member
// (ANSI 8-8-8) resolved once the variant is known.
type PointCode struct {
	Raw  string
	Line int
	set  bool
}

func (p *PointCode) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n, "a point code (a number, or 3-8-3 / 8-8-8)")
	if err != nil {
		return err
	}
	p.Raw, p.Line, p.set = s, n.Line, true
	return nil
}

// resolve turns the text into a point code of the variant (the one parser,
// mtp.PointCodeFormat.Parse, that the host API and the CLI use too).
func (p PointCode) resolve(ansi bool) (uint32, error) {
	pc, err := mtp.PointCodeFormat{ANSI: ansi}.Parse(p.Raw)
	return uint32(pc), err
}

// dashed reports whether the text is written zone-area-id or
// network-cluster-member rather than as a number.
func (p PointCode) dashed() bool { return strings.Contains(p.Raw, "-") }

// AddrPort is "host:port" with a literal IP.
type AddrPort netip.AddrPort

func (a *AddrPort) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n, "an address like 127.0.0.1:2905 or [::1]:2905")
	if err != nil {
		return err
	}
	v, err := netip.ParseAddrPort(s)
	if err != nil {
		return errAt(n, "%q is not an IP address with port (want e.g. 127.0.0.1:2905 or [::1]:2905)", s)
	}
	*a = AddrPort(v)
	return nil
}

// Addr is a literal IP address.
type Addr netip.Addr

func (a *Addr) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n, "an IP address")
	if err != nil {
		return err
	}
	v, err := netip.ParseAddr(s)
	if err != nil {
		return errAt(n, "%q is not an IP address", s)
	}
	*a = Addr(v)
	return nil
}

// CICRanges is a list of "first-last" strings or single numbers.
type CICRanges []stack.CICRange

func (r *CICRanges) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode {
		return errAt(n, "want a list of CIC ranges like [\"1-31\", 33]")
	}
	for _, item := range n.Content {
		s, err := scalar(item, "a CIC or a range first-last")
		if err != nil {
			return err
		}
		first, last, found := strings.Cut(s, "-")
		if !found {
			last = first
		}
		a, errA := strconv.ParseUint(strings.TrimSpace(first), 10, 16)
		b, errB := strconv.ParseUint(strings.TrimSpace(last), 10, 16)
		if errA != nil || errB != nil {
			return errAt(item, "%q is not a CIC range (want first-last, e.g. 1-31)", s)
		}
		if a > b {
			return errAt(item, "CIC range %q is reversed (want first <= last)", s)
		}
		*r = append(*r, stack.CICRange{First: uint16(a), Last: uint16(b)})
	}
	return nil
}

// enum reads one of a fixed set of words.
func enum[T any](n *yaml.Node, field string, values map[string]T, dst *T) error {
	s, err := scalar(n, field)
	if err != nil {
		return err
	}
	v, ok := values[strings.ToLower(s)]
	if !ok {
		keys := make([]string, 0, len(values))
		for k := range values {
			keys = append(keys, k)
		}
		sortStrings(keys)
		return errAt(n, "%q is not a valid %s (want one of %s)", s, field, strings.Join(keys, ", "))
	}
	*dst = v
	return nil
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
