package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/gateway"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show a running gateway's associations, destinations, circuits and congestion",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:9700", Usage: "the gateway's metrics and status address"},
			&cli.BoolFlag{Name: "json", Usage: "print the raw JSON"},
		},
		Action: func(c *cli.Context) error {
			client := http.Client{Timeout: 5 * time.Second}
			resp, err := client.Get("http://" + c.String("addr") + "/status")
			if err != nil {
				return fmt.Errorf("no gateway answers at %s: %w", c.String("addr"), err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("%s/status: %s", c.String("addr"), resp.Status)
			}
			if c.Bool("json") {
				_, err := c.App.Writer.Write(body)
				return err
			}
			var st gateway.Status
			if err := json.Unmarshal(body, &st); err != nil {
				return fmt.Errorf("%s/status: %w", c.String("addr"), err)
			}
			printStatus(c.App.Writer, st)
			return nil
		},
	}
}

func printStatus(w io.Writer, st gateway.Status) {
	fmt.Fprintf(w, "isupgw point code %d, up %s, %d calls\n\n", st.PointCode, st.Uptime, st.Calls)
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
		fmt.Fprintf(tw, "%s\t%d\t%v\t%d\t%d\t%.0f%%\t%s\t%s\n", d.Name, d.PointCode, d.Available, d.Calls, d.ACL, 100*d.MTPAdmit, oos, viol)
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
	}
}
