package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/isupgw/isupgw/gateway"
)

// FetchStatus asks a running gateway for its status at addr (the metrics
// address); it returns the decoded status and the raw JSON.
func FetchStatus(addr string) (gateway.Status, []byte, error) {
	var st gateway.Status
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + "/status")
	if err != nil {
		return st, nil, fmt.Errorf("no gateway answers at %s: %w", addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return st, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return st, body, fmt.Errorf("%s/status: %s", addr, resp.Status)
	}
	if err := json.Unmarshal(body, &st); err != nil {
		return st, body, fmt.Errorf("%s/status: %w", addr, err)
	}
	return st, body, nil
}

// pcText is a point code as the gateway's configuration writes it, or the
// number from an older gateway's status.
func pcText(text string, pc uint32) string {
	if text != "" {
		return text
	}
	return fmt.Sprint(pc)
}

// PrintStatus prints a gateway status as the tables of `isupgw status`.
func PrintStatus(w io.Writer, st gateway.Status) {
	fmt.Fprintf(w, "isupgw point code %s, up %s, %d calls\n", pcText(st.PC, uint32(st.PointCode)), st.Uptime, st.Calls)
	if r := st.Redundancy; r != nil {
		fmt.Fprintf(w, "redundancy: %s since %s (%d role changes, %d takeovers)\n", strings.ToUpper(r.Role),
			r.Since.UTC().Format(time.RFC3339), r.Changes, r.Takeovers)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ASSOCIATION\tSTATE")
	for _, a := range st.Associations {
		fmt.Fprintf(tw, "%s\t%s\n", a.Name, a.State)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DESTINATION\tPOINT CODE\tAVAILABLE\tCALLS\tACL IN\tMTP ADMIT\tOUT OF SERVICE\tCONSTRAINT")
	for _, d := range st.Destinations {
		oos := "no"
		if d.OutOfService {
			oos = "yes: " + d.Reason
		}
		viol := "-"
		if d.Violation != "" {
			viol = d.Violation
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%d\t%d\t%.0f%%\t%s\t%s\n", d.Name, pcText(d.PC, d.PointCode), d.Available, d.Calls, d.ACL, 100*d.MTPAdmit, oos, viol)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CIRCUITS\tCOUNT")
	states := make([]string, 0, len(st.Circuits))
	for s := range st.Circuits {
		states = append(states, s)
	}
	sort.Strings(states)
	for _, s := range states {
		fmt.Fprintf(tw, "%s\t%d\n", s, st.Circuits[s])
	}
	tw.Flush()
	printLinks(w, st.Links)
	if c := st.Congestion; c != nil {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "QUEUE\tLEVEL\tPROBE DELAY\tAVERAGE")
		fmt.Fprintf(tw, "inbound\t%d\t%.1f ms\t%.1f ms\n", c.InboundLevel, c.InboundDelayMS, c.InboundAvgMS)
		fmt.Fprintf(tw, "outbound\t%d\t%.1f ms\t%.1f ms\n", c.OutboundLevel, c.OutboundDelayMS, c.OutboundAvgMS)
		tw.Flush()
		yellow := "no"
		if c.CodeYellow {
			yellow = "YES (new calls refused: high traffic)"
		}
		fmt.Fprintf(w, "\nCode Yellow: %s; ACL in our RELs: %d; hosts' declared overload: %d; level 1 at %.0f ms delay or %.0f ms average\n",
			yellow, c.ACLSent, c.HostOverload, c.Level1DelayMS, c.Level1AvgMS)
		if c.Level1Outseize == "throttle" {
			fmt.Fprintf(w, "Outbound level 1 throttles new calls (admitted while the queue waits less than %.0f ms): %d admitted so far\n", c.ThrottleTargetMS, c.Level1Admitted)
		} else {
			fmt.Fprintln(w, "Outbound level 1 refuses every new call")
		}
	}
}
