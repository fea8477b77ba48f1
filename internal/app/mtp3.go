package app

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"text/tabwriter"
	"time"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/host"
	"github.com/isupgw/isupgw/internal/config"
	"github.com/isupgw/isupgw/internal/metrics"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/capture"
	"github.com/isupgw/isupgw/mtp/m2pa"
	"github.com/isupgw/isupgw/mtp/mtp2"
	"github.com/isupgw/isupgw/mtp/mtp3"
)

// mtp3Parts is the own MTP3 node and the signalling links under it.
type mtp3Parts struct {
	node  *mtp3.Node
	m2pa  []*m2pa.Link // in plan order (fault tests reach them here)
	opens []func() error
	stops []func() error
}

// buildMTP3 makes the links of the plan (nothing is opened yet) and the node.
// With a capture writer, M2PA links write what they send and receive to it
// as SCTP with PPID 5, which tshark decodes down to ISUP.
func buildMTP3(p *config.MTP3Plan, capW *capture.Writer, onLinkset func(name string, adj mtp.PointCode, up bool)) (*mtp3Parts, error) {
	parts := &mtp3Parts{}
	nc := p.Node
	nc.OnLinkset = onLinkset
	nc.Linksets = append([]mtp3.LinksetConfig(nil), p.Node.Linksets...)
	for i := range nc.Linksets {
		for _, lp := range p.Links[i] {
			var lc mtp3.LinkConfig
			switch lp.Type {
			case config.LinkM2PA:
				mc := lp.M2PA
				if capW != nil {
					mc.Tap = func(out bool, local, remote netip.AddrPort, stream uint16, b []byte) {
						src, dst := local, remote
						if !out {
							src, dst = remote, local
						}
						_ = capW.WriteSCTP(time.Now(), src, dst, stream, m2pa.PPID, b) // a capture error never touches traffic
					}
				}
				l, err := m2pa.New(mc)
				if err != nil {
					return nil, err
				}
				l.Emergency(p.Emergency)
				lc = mtp3.LinkConfig{SLC: lp.SLC, Link: l}
				parts.m2pa = append(parts.m2pa, l)
				parts.opens = append(parts.opens, l.Open)
				parts.stops = append(parts.stops, l.Close)
			case config.LinkMTP2:
				l, err := mtp2.New(lp.MTP2)
				if err != nil {
					return nil, err
				}
				l.Emergency(p.Emergency)
				lc = mtp3.LinkConfig{SLC: lp.SLC, Link: l}
				parts.opens = append(parts.opens, l.Open)
				parts.stops = append(parts.stops, l.Close)
			default:
				return nil, fmt.Errorf("mtp3: link %s: unknown type %q", lp.Name, lp.Type)
			}
			nc.Linksets[i].Links = append(nc.Linksets[i].Links, lc)
		}
	}
	n, err := mtp3.New(nc)
	if err != nil {
		return nil, err
	}
	parts.node = n
	return parts, nil
}

// AlarmLinkset is raised to the hosts when a linkset that carried traffic
// has no link left, and cleared when traffic restarts on it.
const AlarmLinkset uint16 = 0x0F

func linksetAlarm(name string, adj mtp.PointCode, up bool, pcf mtp.PointCodeFormat) host.Alarm {
	text := fmt.Sprintf("SS7 linkset %s to %s unavailable: no signalling link in service", name, pcf.Format(adj))
	if up {
		text = fmt.Sprintf("SS7 linkset %s to %s restored", name, pcf.Format(adj))
	}
	return host.Alarm{Number: AlarmLinkset, Severity: 3, Cleared: up, Text: text,
		Data: map[string]any{"dpc": uint32(adj), "linkset": name}}
}

// start opens the links (listeners bound, dialling begun) and activates them.
func (m *mtp3Parts) start() error {
	for _, o := range m.opens {
		if err := o(); err != nil {
			m.close()
			return err
		}
	}
	m.node.Start()
	return nil
}

func (m *mtp3Parts) close() error {
	m.node.Close()
	var errs []error
	for _, s := range m.stops {
		errs = append(errs, s())
	}
	return errors.Join(errs...)
}

// linkStatus is the node's links for /status.
func (m *mtp3Parts) linkStatus() []gateway.LinkStatus {
	var out []gateway.LinkStatus
	for _, ls := range m.node.Status() {
		for _, l := range ls.Links {
			out = append(out, gateway.LinkStatus{Linkset: ls.Name, Link: l.Link, SLC: l.SLC, State: l.State, Available: ls.Available,
				MSUsOut: l.MSUsOut, MSUsIn: l.MSUsIn, SLTPassed: l.SLTPassed, SLTFailed: l.SLTFailed,
				Changeovers: l.Changeovers, Changebacks: l.Changebacks, Failures: l.Failures, LastFailure: l.LastFailure})
		}
	}
	return out
}

// metrics is the links for /metrics (nil without an mtp3 section).
func (m *mtp3Parts) metrics() []metrics.Link {
	if m == nil {
		return nil
	}
	var out []metrics.Link
	for _, l := range m.linkStatus() {
		out = append(out, metrics.Link{Linkset: l.Linkset, Name: l.Link, Available: l.State == "available",
			MSUsOut: l.MSUsOut, MSUsIn: l.MSUsIn, SLTPassed: l.SLTPassed, SLTFailed: l.SLTFailed,
			Changeovers: l.Changeovers, Changebacks: l.Changebacks, Failures: l.Failures})
	}
	return out
}

// printLinks adds the MTP3 links table to `isupgw status`.
func printLinks(w io.Writer, links []gateway.LinkStatus) {
	if len(links) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LINKSET\tLINK\tSLC\tSTATE\tLINKSET UP\tMSU OUT\tMSU IN\tSLT OK\tSLT FAILED\tCHANGEOVERS\tCHANGEBACKS\tFAILURES")
	for _, l := range links {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%v\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", l.Linkset, l.Link, l.SLC, l.State, l.Available,
			l.MSUsOut, l.MSUsIn, l.SLTPassed, l.SLTFailed, l.Changeovers, l.Changebacks, l.Failures)
	}
	tw.Flush()
}
