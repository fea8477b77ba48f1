package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/isupgw/isupgw/gateway"
	"github.com/isupgw/isupgw/host/client"
	"github.com/isupgw/isupgw/host/wire"
	"github.com/isupgw/isupgw/internal/lockedbuf"
	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp"
)

func metricsText(t *testing.T, p *proc) string {
	t.Helper()
	resp, err := http.Get("http://" + p.run.MetricsAddr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// An association that does not come up is logged at warn with its address and
// reason and raises alarm 0x1B, visible in /status, the metrics and to hosts;
// once the peer is there the alarm clears. (Here the fix is the peer
// appearing at the configured address; ops_test.go fixes a wrong address
// with a reload.)
func TestAssociationDownWarnsAndAlarmsUntilUp(t *testing.T) {
	grace, every, poll := associationGrace, associationWarnEvery, associationPoll
	associationGrace, associationWarnEvery, associationPoll = 300*time.Millisecond, time.Hour, 50*time.Millisecond
	t.Cleanup(func() { associationGrace, associationWarnEvery, associationPoll = grace, every, poll })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	udp := freeUDPPort(t)
	logB := &lockedbuf.Buffer{}
	b := startLogged(t, ctx, fmt.Sprintf(yamlB, udp), logB)
	host, err := client.Dial(context.Background(), "tcp", b.run.Host.TCPAddr().String(), client.Config{App: "ops", Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	alarm := func(cleared bool) *client.Alarm { return waitAssociationAlarm(t, host, cleared, logB) }
	raised := alarm(false)
	addr := fmt.Sprintf("127.0.0.1:%d", udp) // where the SCTP-over-UDP datagrams go
	if raised.Data["association"] != "a" || raised.Data["address"] != addr || raised.Data["reason"] == "" {
		t.Errorf("alarm data %v, want association a, address %s and a reason", raised.Data, addr)
	}
	eventually(t, "the warn line", func() bool {
		for _, l := range strings.Split(logB.String(), "\n") {
			if strings.Contains(l, `"level":"warn"`) && strings.Contains(l, "association not up") &&
				strings.Contains(l, `"address":"`+addr+`"`) && strings.Contains(l, `"reason":`) {
				return true
			}
		}
		return false
	})
	st, _, err := FetchFullStatus(b.run.MetricsAddr.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Alarms) != 1 || st.Alarms[0].Number != "0x1B" || len(DownAssociations(st)) != 1 {
		t.Fatalf("status alarms %+v, down %v", st.Alarms, DownAssociations(st))
	}
	m := metricsText(t, b)
	for _, want := range []string{
		`isupgw_alarm_active{dpc="",number="0x1B"} 1`,
		`isupgw_destination_available{dpc="1",group="a"} 0`,
		`isupgw_group_circuits{dpc="1",group="a",state="locally_blocked"} 0`,
		`isupgw_group_circuits{dpc="1",group="a",state="idle"} 8`,
		`isupgw_build_info{`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	// The peer appears where B dials: the association comes up, the alarm clears.
	a := start(t, ctx, fmt.Sprintf(yamlA, udp, "10s"))
	alarm(true)
	eventually(t, "B's status without alarms", func() bool {
		st, _, err := FetchFullStatus(b.run.MetricsAddr.String())
		return err == nil && len(st.Alarms) == 0 && len(DownAssociations(st)) == 0
	})
	if !strings.Contains(logB.String(), "association up: alarm 0x1B cleared") {
		t.Errorf("no info line for the association coming up:\n%s", logB.String())
	}
	eventually(t, "A's destination available in the metrics", func() bool {
		return strings.Contains(metricsText(t, a), `isupgw_destination_available{dpc="2",group="b"} 1`)
	})
	if n := strings.Count(logB.String(), "association not up"); n != 1 {
		t.Errorf("%d warn lines, want 1 (rate-limited)", n)
	}
}

// logOut, when set, is the log of the gateways start starts.
var logOut io.Writer

// startLogged is start with the gateway's log kept.
func startLogged(t *testing.T, ctx context.Context, yaml string, log io.Writer) *proc {
	t.Helper()
	logOut = log
	defer func() { logOut = nil }()
	return start(t, ctx, yaml)
}

func TestAlarmLogsWriteTheNumberInHex(t *testing.T) {
	var b bytes.Buffer
	logAlarm(zerolog.New(&b), stack.Alarm{Kind: stack.AlarmDestinationUnavailable, PC: 2, Text: "MTP pause"}, mtp.PointCodeFormat{})
	if !strings.Contains(b.String(), `"alarm":"0x17"`) {
		t.Fatalf("log line %s lacks the alarm number in hex", b.String())
	}
}

func TestDownAssociationsCountsLinksets(t *testing.T) {
	var st Status
	st.Associations = []gateway.AssociationStatus{{Name: "stp", State: "active"}, {Name: "sg", State: "inactive"}}
	st.Links = []gateway.LinkStatus{{Linkset: "ls1", Link: "a", Available: false}, {Linkset: "ls1", Link: "b", Available: false}, {Linkset: "ls2", Link: "c", Available: true}}
	got := strings.Join(DownAssociations(st), "; ")
	if got != "sg (inactive); linkset ls1 (unavailable)" {
		t.Fatalf("down: %q", got)
	}
}

// waitAssociationAlarm waits (at most 20 s) for alarm 0x1B raised or cleared
// at host; log is the gateway's, shown on failure.
func waitAssociationAlarm(t *testing.T, host *client.Client, cleared bool, log *lockedbuf.Buffer) *client.Alarm {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case e := <-host.Events():
			if a, ok := e.(*client.Alarm); ok && a.Number == wire.AlarmAssociationDown && a.Cleared == cleared {
				return a
			}
		case <-deadline:
			t.Fatalf("no alarm 0x1B (cleared %v) within 20 s; log:\n%s", cleared, log.String())
		}
	}
}
