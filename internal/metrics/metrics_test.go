package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/host"
	"github.com/isupgw/isupgw/isup"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
	"github.com/isupgw/isupgw/mtp/m3ua"
	"github.com/isupgw/isupgw/sprc"
)

func TestScrape(t *testing.T) {
	st, err := stack.New(stack.Config{OPC: 1, Groups: []stack.Group{{Name: "b", DPC: 2, Variant: isup.ITU, CICs: []stack.CICRange{{First: 1, Last: 31}}}}},
		func(*mtp.Message) error { return nil }, func(stack.Event) {})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go st.Run(ctx)
	st.Submit(stack.Maintenance{Op: stack.OpBlock, DPC: 2, CIC: 5})
	if _, err := st.Inspect(ctx); err != nil { // the block went through; the next publish shows it
		t.Fatal(err)
	}
	ctl, err := sprc.New(sprc.Default, time.Now, sprc.Actions{})
	if err != nil {
		t.Fatal(err)
	}
	ctl.Probe(sprc.Outbound, 11*time.Second)
	ctl.RELReceived(2, 1)
	ctl.OutgoingCallStarted(2, 1) // a call in set-up to 2, under the initial limit
	var ms m3ua.Stats
	ms.DataIn.Add(7)
	src := Sources{
		Stack:   st.Stats,
		M3UA:    &ms,
		Peers:   func() map[string]string { return map[string]string{"b": "active"} },
		Control: ctl.Snapshot,
		Host: func() host.MetricsSnapshot {
			return host.MetricsSnapshot{ConnectionsOpen: 2, Requests: map[string]uint64{"outseize": 3}}
		},
	}
	h, err := Handler(NewCollector(src), func() any { return map[string]int{"calls": 0} })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(path string) string {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		return string(b)
	}
	// The published snapshot lags by up to a second: poll the scrape (bounded).
	var text string
	for deadline := time.Now().Add(5 * time.Second); ; {
		text = get("/metrics")
		if strings.Contains(text, `isupgw_circuits{state="idle, locally blocked, awaiting BLA"} 1`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range []string{
		`isupgw_circuits{state="idle"} 30`,
		`isupgw_circuits{state="idle, locally blocked, awaiting BLA"} 1`,
		`isupgw_isup_messages_sent_total{type="BLO"} 1`,
		`isupgw_sprc_level{direction="outbound"} 1`,
		`isupgw_sprc_probe_delay_seconds{direction="outbound"} 11`,
		`isupgw_sprc_destination_acl{dpc="2"} 1`,
		`isupgw_sprc_acl_sent 0`,
		fmt.Sprintf(`isupgw_sprc_destination_admission_limit{dpc="2"} %d`, sprc.Default.Admission.InitialLimit),
		`isupgw_sprc_destination_in_setup{dpc="2"} 1`,
		`isupgw_m3ua_data_messages_total{direction="in"} 7`,
		`isupgw_m3ua_association_up{association="b",state="active"} 1`,
		`isupgw_host_connections 2`,
		`isupgw_host_requests_total{type="outseize"} 3`,
		`go_goroutines`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	var status map[string]int
	if err := json.Unmarshal([]byte(get("/status")), &status); err != nil || status["calls"] != 0 {
		t.Fatalf("/status: %v %v", status, err)
	}
	// Every metric name follows the conventions: prefix, counters end in _total.
	for _, n := range Names() {
		if !strings.HasPrefix(n, "isupgw_") {
			t.Errorf("%s lacks the isupgw_ prefix", n)
		}
	}
}
