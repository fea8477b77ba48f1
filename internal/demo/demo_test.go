package demo

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/isupgw/isupgw/isup/stack"
	"github.com/isupgw/isupgw/mtp/capture"
	"github.com/isupgw/isupgw/sprc"
)

// TestDemoShowsCongestionAndRecovery runs a short demo and checks, from its
// output and summary, that 0x0C refusals and ACL happened, that A's level
// rose once and held, and that the levels returned to no congestion.
func TestDemoShowsCongestionAndRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo runs for 12 s")
	}
	var out bytes.Buffer
	pcap := filepath.Join(t.TempDir(), "demo.pcap")
	sum, err := Run(context.Background(), Options{Duration: 12 * time.Second, Out: &out, PCAP: pcap})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Refused[stack.StatusOutboundCongestion] == 0 {
		t.Errorf("no 0x0C refusals:\n%s", out.String())
	}
	if sum.ACLReceived == 0 {
		t.Errorf("B never heard an ACL:\n%s", out.String())
	}
	if sum.MaxLevel[sprc.Outbound] == 0 {
		t.Errorf("A's outbound level never rose")
	}
	// The adaptive admission refuses only the excess: the level rises once
	// for the one overload and holds until the load drops, not flapping.
	if sum.LevelRaises != 1 {
		t.Errorf("A's outbound alarm 0x16 raised %d times, want once:\n%s", sum.LevelRaises, out.String())
	}
	if sum.EndLevel != [2]sprc.Level{0, 0} {
		t.Errorf("levels at the end %v, want none", sum.EndLevel)
	}
	if sum.Completed == 0 || sum.Admitted > sum.Offered {
		t.Errorf("offered %d admitted %d completed %d", sum.Offered, sum.Admitted, sum.Completed)
	}
	text := out.String()
	for _, want := range []string{"A:0x16 stack congestion", "A:0x16 stack congestion cleared", "summary:", legend} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	// The capture holds A's traffic and reads back.
	r, err := capture.Open(pcap)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		m, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if m.HasLabel && m.SI == 5 {
			n++
		}
	}
	if n == 0 {
		t.Fatal("the demo's capture holds no ISUP")
	}
}

func TestAlarmLabel(t *testing.T) {
	for _, tc := range []struct {
		a    sprc.Alarm
		want string
	}{
		{sprc.Alarm{Number: sprc.AlarmStackCongestion}, "A:0x16 stack congestion"},
		{sprc.Alarm{Number: sprc.AlarmACC, Cleared: true}, "A:0x1A automatic congestion control cleared"},
		{sprc.Alarm{Number: sprc.AlarmSystemBusy}, "A:0x20 System Busy (Code Yellow)"},
		{sprc.Alarm{Number: 0x7F}, "A:0x7F"},
	} {
		if got := alarmLabel("A", tc.a); got != tc.want {
			t.Errorf("alarmLabel(%+v) = %q, want %q", tc.a, got, tc.want)
		}
	}
}
