package replay

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/isupgw/isupgw/isup"
)

// TypeCount is the number of messages of one type.
type TypeCount struct {
	Type  isup.MessageType
	Count int
}

// CauseCount is the number of calls released with one cause.
type CauseCount struct {
	Cause uint8
	Count int
}

// Report is what the Analyzer found.
type Report struct {
	Messages    int
	Undecodable int
	ByType      []TypeCount // in message type code order
	Circuits    int
	Procedures  int // circuit supervision procedures started (RSC, GRS, BLO, ...)
	First, Last time.Time
	Calls       []*Call
	Violations  []Violation
	Confusion   []Msg // every CFN, with the frame it came in

	Answered, Unanswered, InProgress, Partial int
	ByCause                                   []CauseCount // calls released, by the cause of their first REL
}

// Report summarises the analysis; call Finish first.
func (a *Analyzer) Report() Report {
	r := Report{Messages: a.msgs, Undecodable: a.bad, Circuits: len(a.circuits), Procedures: a.procs,
		First: a.first, Last: a.last, Calls: a.calls, Violations: a.viol, Confusion: a.cfn}
	for t, n := range a.counts {
		if n > 0 {
			r.ByType = append(r.ByType, TypeCount{isup.MessageType(t), n})
		}
	}
	causes := map[uint8]int{}
	for _, c := range a.calls {
		if c.Partial {
			r.Partial++
		}
		switch {
		case c.End == EndNone:
			r.InProgress++
		case c.Answered:
			r.Answered++
		default:
			r.Unanswered++
		}
		if c.Released {
			causes[c.Cause]++
		}
	}
	for c, n := range causes {
		r.ByCause = append(r.ByCause, CauseCount{c, n})
	}
	slices.SortFunc(r.ByCause, func(x, y CauseCount) int {
		if x.Count != y.Count {
			return y.Count - x.Count
		}
		return int(x.Cause) - int(y.Cause)
	})
	return r
}

// Count returns the number of messages of type t.
func (r *Report) Count(t isup.MessageType) int {
	for _, tc := range r.ByType {
		if tc.Type == t {
			return tc.Count
		}
	}
	return 0
}

// Analyze runs every message of the capture through a new Analyzer and
// returns it finished, with the call of each message (0 for none).
func Analyze(c *Capture, v isup.Variant) (*Analyzer, []int) {
	a := NewAnalyzer(v)
	calls := make([]int, len(c.Msgs))
	for i := range c.Msgs {
		calls[i] = a.Add(&c.Msgs[i])
	}
	a.Finish()
	return a, calls
}

const timeLayout = "2006-01-02 15:04:05.000000"

// WriteFlow prints one line per ISUP message: frame, seconds since the first
// message, OPC>DPC, CIC, type, key parameters and the call it belongs to.
func WriteFlow(w io.Writer, msgs []Msg, calls []int) error {
	bw := bufio.NewWriter(w)
	var t0 time.Time
	if len(msgs) > 0 {
		t0 = msgs[0].Time
	}
	for i := range msgs {
		m := &msgs[i]
		line := fmt.Sprintf("%6d %11.6f  %d>%d  cic=%-5d %s", m.Frame, m.Time.Sub(t0).Seconds(), m.OPC, m.DPC, m.CIC, m.Type)
		detail := ""
		if m.Msg == nil {
			detail = fmt.Sprintf("undecodable: %v", m.Err)
		} else {
			detail = isup.DescribeString(m.Msg)
		}
		if detail != "" {
			line += strings.Repeat(" ", max(0, 4-len(m.Type.String()))) + " " + detail
		}
		if i < len(calls) && calls[i] > 0 {
			line += fmt.Sprintf("  [call %d]", calls[i])
		}
		bw.WriteString(line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// maxListed bounds the anomalies listed per kind in the summary; --check
// lists them all.
const maxListed = 10

// WriteSummary prints the totals: messages by type, calls, releases by
// cause, confusion messages and anomalies.
func WriteSummary(w io.Writer, c *Capture, r Report) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "summary of %s\n", c.File)
	fmt.Fprintf(bw, "  frames        %d read, %d ISUP messages", c.Stats.Frames, r.Messages)
	if r.Undecodable > 0 {
		fmt.Fprintf(bw, " (%d undecodable)", r.Undecodable)
	}
	if c.Other > 0 {
		fmt.Fprintf(bw, ", %d other MTP3 user messages", c.Other)
	}
	if n := len(c.FrameErrors); n > 0 {
		fmt.Fprintf(bw, ", %d bad frames", n)
	}
	bw.WriteByte('\n')
	if r.Messages > 0 {
		fmt.Fprintf(bw, "  time          %s to %s UTC (%.3f s)\n", r.First.UTC().Format(timeLayout),
			r.Last.UTC().Format(timeLayout), r.Last.Sub(r.First).Seconds())
	}
	var parts []string
	for _, tc := range r.ByType {
		parts = append(parts, fmt.Sprintf("%s %d", tc.Type, tc.Count))
	}
	fmt.Fprintf(bw, "  messages      %s\n", orNone(strings.Join(parts, ", ")))
	fmt.Fprintf(bw, "  circuits      %d\n", r.Circuits)
	fmt.Fprintf(bw, "  calls         %d: %d answered, %d unanswered, %d in progress at the end", len(r.Calls), r.Answered, r.Unanswered, r.InProgress)
	if r.Partial > 0 {
		fmt.Fprintf(bw, ", %d begun before the capture", r.Partial)
	}
	bw.WriteByte('\n')
	if len(r.ByCause) > 0 {
		fmt.Fprintf(bw, "  released by cause\n")
		for _, cc := range r.ByCause {
			fmt.Fprintf(bw, "    %3d %-40s %d\n", cc.Cause, CauseName(cc.Cause), cc.Count)
		}
	}
	if len(r.Confusion) > 0 {
		fmt.Fprintf(bw, "  confusion     %d CFN\n", len(r.Confusion))
		for i := range r.Confusion {
			m := &r.Confusion[i]
			what := ""
			if cfn, ok := m.Msg.(*isup.Confusion); ok {
				what = fmt.Sprintf(": cause %d %s", cfn.Cause.Value, CauseName(cfn.Cause.Value))
			}
			fmt.Fprintf(bw, "    frame %d %d>%d cic=%d%s\n", m.Frame, m.OPC, m.DPC, m.CIC, what)
		}
	}
	if len(r.Violations) == 0 {
		fmt.Fprintf(bw, "  anomalies     none\n")
		return bw.Flush()
	}
	fmt.Fprintf(bw, "  anomalies     %d\n", len(r.Violations))
	byKind := map[Kind][]Violation{}
	var kinds []Kind
	for _, v := range r.Violations {
		if byKind[v.Kind] == nil {
			kinds = append(kinds, v.Kind)
		}
		byKind[v.Kind] = append(byKind[v.Kind], v)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		vs := byKind[k]
		fmt.Fprintf(bw, "    %s: %d\n", k, len(vs))
		for i, v := range vs {
			if i == maxListed {
				fmt.Fprintf(bw, "      ... and %d more (replay --check lists them all)\n", len(vs)-maxListed)
				break
			}
			fmt.Fprintf(bw, "      %s\n", v)
		}
	}
	return bw.Flush()
}

// WriteCheck prints every violation, one per line with its frame, then a
// verdict line.
func WriteCheck(w io.Writer, c *Capture, r Report) error {
	bw := bufio.NewWriter(w)
	for _, v := range r.Violations {
		fmt.Fprintf(bw, "%s  [%s]\n", v, v.Kind)
	}
	fmt.Fprintf(bw, "checked %d ISUP messages on %d circuits: %d calls, %d supervision procedures, %d violations\n",
		r.Messages, r.Circuits, len(r.Calls), r.Procedures, len(r.Violations))
	return bw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
