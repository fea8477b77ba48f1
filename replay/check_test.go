package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/isupgw/isupgw/isup"
)

type wantViolation struct {
	frame int
	kind  Kind
	text  string // a substring of the violation's text
}

func checkSteps(t *testing.T, steps []step) Report {
	t.Helper()
	a, _ := Analyze(&Capture{Msgs: encode(t, steps, isup.ITU)}, isup.ITU)
	return a.Report()
}

func hwCGB(k isup.MessageType, cic uint16, rng uint8, cics ...int) *isup.GroupSupervision {
	m := cgb(k, cic, rng, cics...)
	m.Type = isup.HardwareFailureOriented
	return m
}

// TestCheckerProcedures feeds the checker exchanges that break one Q.764
// rule each (and a few that look odd but are allowed) and requires exactly
// the expected violations, with their frames.
func TestCheckerProcedures(t *testing.T) {
	cases := []struct {
		name  string
		steps []step
		want  []wantViolation
	}{
		{"clean rich traffic", richTraffic(), nil},
		{"ACM with no call", []step{{1, rlc(1)}, {2, acm(1)}}, []wantViolation{{2, KindState, "ACM with no call"}}},
		{"second ACM and ACM after answer", []step{{1, iam(1, "1")}, {2, acm(1)}, {2, acm(1)}, {2, anm(1)}, {2, acm(1)}},
			[]wantViolation{{3, KindState, "second ACM"}, {5, KindState, "ACM after the answer"}}},
		{"CON after ACM", []step{{1, iam(1, "1")}, {2, acm(1)}, {2, &isup.Connect{Circuit: isup.Circuit{CIC: 1}}}},
			[]wantViolation{{3, KindState, "CON after ACM"}}},
		{"CPG before ACM", []step{{1, iam(1, "1")}, {2, cpg(1)}}, []wantViolation{{2, KindState, "CPG before ACM"}}},
		{"ACM from the calling side", []step{{1, iam(1, "1")}, {1, acm(1)}}, []wantViolation{{2, KindState, "sent the IAM of call 1 itself"}}},
		{"SUS before answer, RES without SUS", []step{{1, iam(1, "1")}, {2, acm(1)}, {2, sus(isup.SUS, 1)}, {2, anm(1)}, {1, sus(isup.RES, 1)}},
			[]wantViolation{{3, KindState, "SUS before the call was answered"}, {5, KindState, "RES from 1 with no SUS"}}},
		{"two IAMs from one side", []step{{1, iam(1, "1")}, {2, acm(1)}, {1, iam(1, "2")}},
			[]wantViolation{{3, KindTwoCalls, "still up"}}},
		{"dual seizure", []step{{1, iam(2, "1")}, {2, iam(2, "2")}}, []wantViolation{{2, KindTwoCalls, "dual seizure"}}},
		{"missing RLC before a new IAM", []step{{1, iam(1, "1")}, {2, anm(1)}, {1, rel(1, 16)}, {1, iam(1, "2")}},
			[]wantViolation{{4, KindMissingRLC, "IAM before the RLC for the REL at frame 3"}}},
		{"missing RLC at the end", []step{{1, iam(1, "1")}, {2, anm(1)}, {1, rel(1, 16)}},
			[]wantViolation{{3, KindMissingRLC, "REL never answered by RLC"}}},
		{"REL repeated (T1) and both ends releasing are fine", []step{{1, iam(1, "1")}, {2, anm(1)}, {1, rel(1, 16)}, {1, rel(1, 16)},
			{2, rel(1, 16)}, {2, rlc(1)}, {1, rlc(1)}}, nil},
		{"ACM crossing the REL is fine", []step{{1, iam(1, "1")}, {1, rel(1, 16)}, {2, acm(1)}, {2, rlc(1)}}, nil},
		{"ANM after own REL", []step{{1, iam(1, "1")}, {2, rel(1, 17)}, {2, anm(1)}, {1, rlc(1)}},
			[]wantViolation{{3, KindState, "ANM after 2 sent REL"}}},
		{"RLC from the releasing side", []step{{1, iam(1, "1")}, {1, rel(1, 16)}, {1, rlc(1)}},
			[]wantViolation{{2, KindMissingRLC, "never answered"}, {3, KindState, "which sent the REL at frame 2 itself"}}},
		{"RLC with no REL", []step{{1, iam(1, "1")}, {2, anm(1)}, {2, rlc(1)}}, []wantViolation{{3, KindState, "RLC with no REL or RSC"}}},
		{"REL on an idle circuit", []step{{1, simple(isup.RSC, 1)}, {2, rlc(1)}, {2, rel(1, 16)}, {1, rlc(1)}},
			[]wantViolation{{3, KindState, "REL with no call"}}},
		{"IAM on a blocked circuit", []step{{1, simple(isup.BLO, 1)}, {2, simple(isup.BLA, 1)}, {2, iam(1, "1")}, {1, rel(1, 16)}, {2, rlc(1)}},
			[]wantViolation{{3, KindBlocked, "blocked"}}},
		{"IAM by the blocking side is allowed", []step{{1, simple(isup.BLO, 1)}, {2, simple(isup.BLA, 1)}, {1, iam(1, "1")}}, nil},
		{"IAM on a group-blocked circuit", []step{{2, cgb(isup.CGB, 10, 7, 3)}, {1, cgb(isup.CGBA, 10, 7, 3)}, {1, iam(13, "1")}, {1, iam(14, "1")}},
			[]wantViolation{{3, KindBlocked, "cic=13"}}},
		{"UBL ends the blocking", []step{{1, simple(isup.BLO, 1)}, {2, simple(isup.BLA, 1)}, {1, simple(isup.UBL, 1)}, {2, simple(isup.UBA, 1)}, {2, iam(1, "1")}}, nil},
		{"BLA and UBA without request", []step{{1, simple(isup.RSC, 1)}, {2, rlc(1)}, {2, simple(isup.BLA, 1)}, {2, simple(isup.UBA, 1)}},
			[]wantViolation{{3, KindState, "BLA with no BLO"}, {4, KindState, "UBA with no UBL"}}},
		{"unanswered requests", []step{{1, simple(isup.BLO, 1)}, {1, simple(isup.RSC, 2)}, {2, grs(isup.GRS, 10, 5)}, {1, &isup.CircuitQuery{Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 2}}}},
			[]wantViolation{{1, KindUnanswered, "BLO never answered by BLA"}, {2, KindUnanswered, "RSC never answered"}, {3, KindUnanswered, "GRS (range 5) never answered by GRA"}, {4, KindUnanswered, "CQM (range 2) never answered by CQR"}}},
		{"GRA range differs", []step{{1, grs(isup.GRS, 1, 7)}, {2, grs(isup.GRA, 1, 5)}},
			[]wantViolation{{2, KindMismatch, "GRA range 5, the GRS at frame 1 had range 7"}}},
		{"GRS range 0", []step{{1, grs(isup.GRS, 1, 0)}, {2, grs(isup.GRA, 1, 0)}}, []wantViolation{{1, KindMismatch, "outside 1..31"}}},
		{"GRA without GRS", []step{{1, iam(1, "1")}, {2, grs(isup.GRA, 1, 3)}}, []wantViolation{{2, KindState, "GRA with no GRS from 1"}}},
		{"GRS clears calls and pending releases", []step{{1, iam(1, "1")}, {2, anm(1)}, {1, iam(2, "1")}, {1, rel(2, 16)},
			{2, grs(isup.GRS, 1, 3)}, {1, grs(isup.GRA, 1, 3)}, {1, iam(1, "1")}}, nil},
		{"IAM during a group reset", []step{{1, grs(isup.GRS, 1, 3)}, {2, iam(2, "1")}, {2, grs(isup.GRA, 1, 3)}},
			[]wantViolation{{2, KindState, "awaits its GRA"}}},
		{"CGBA status differs", []step{{1, cgb(isup.CGB, 1, 7, 0, 1)}, {2, cgb(isup.CGBA, 1, 7, 0)}},
			[]wantViolation{{2, KindMismatch, "acknowledges CICs 1, the CGB at frame 1 asked for 1,2"}}},
		{"CGUA type differs", []step{{1, cgb(isup.CGU, 1, 7, 0)}, {2, hwCGB(isup.CGUA, 1, 7, 0)}},
			[]wantViolation{{2, KindMismatch, "type 1"}}},
		{"hardware CGB ends the call", []step{{1, iam(3, "1")}, {2, anm(3)}, {2, hwCGB(isup.CGB, 1, 7, 2)}, {1, hwCGB(isup.CGBA, 1, 7, 2)}, {1, rel(3, 16)}},
			[]wantViolation{{5, KindState, "REL with no call"}, {5, KindMissingRLC, "never answered"}}},
		{"CQR with the wrong number of states", []step{{1, &isup.CircuitQuery{Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 3}}},
			{2, &isup.CircuitQueryResponse{Circuit: isup.Circuit{CIC: 1}, RangeAndStatus: isup.RangeAndStatus{Range: 3}, States: []byte{1, 1}}}},
			[]wantViolation{{2, KindMismatch, "2 circuit states for range 3"}}},
		{"RSC clears the call; RLC answers it", []step{{1, iam(1, "1")}, {2, anm(1)}, {2, simple(isup.RSC, 1)}, {1, rlc(1)}, {1, iam(1, "2")}}, nil},
		{"UCIC ends the call", []step{{1, iam(5, "1")}, {2, simple(isup.UCIC, 5)}, {1, iam(5, "1")}}, nil},
		{"capture begins mid-call", []step{{2, anm(1)}, {1, rel(1, 16)}, {2, rlc(1)}, {2, simple(isup.BLA, 2)}, {1, rlc(3)}, {2, grs(isup.GRA, 7, 2)}}, nil},
		{"SAM after answer", []step{{1, iam(1, "1")}, {2, anm(1)}, {1, &isup.SubsequentAddress{Circuit: isup.Circuit{CIC: 1}}}},
			[]wantViolation{{3, KindState, "SAM after answered"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := checkSteps(t, c.steps)
			var got []string
			for _, v := range r.Violations {
				got = append(got, fmt.Sprintf("%d %s: %s", v.Frame, v.Kind, v))
			}
			if len(r.Violations) != len(c.want) {
				t.Fatalf("%d violations, want %d:\n%s", len(r.Violations), len(c.want), strings.Join(got, "\n"))
			}
			for i, w := range c.want {
				v := r.Violations[i]
				if v.Frame != w.frame || v.Kind != w.kind || !strings.Contains(v.String(), w.text) {
					t.Errorf("violation %d: %s\nwant frame %d %s containing %q", i, got[i], w.frame, w.kind, w.text)
				}
			}
		})
	}
}

// TestCallAccounting: answered, unanswered, in progress, partial and the
// causes of the calls in a small exchange.
func TestCallAccounting(t *testing.T) {
	steps := []step{
		{2, anm(9)}, // begun before the capture
		{1, iam(1, "100")}, {2, acm(1)}, {2, anm(1)}, {1, rel(1, isup.CauseNormalClearing)}, {2, rlc(1)},
		{1, iam(2, "200")}, {2, rel(2, isup.CauseUserBusy)}, {1, rlc(2)},
		{2, iam(3, "300")}, {1, acm(3)}, // still ringing at the end
		{1, iam(4, "400")}, {2, simple(isup.RSC, 4)}, {1, rlc(4)}, // reset before answer
		{1, rel(9, isup.CauseNormalClearing)}, {2, rlc(9)},
	}
	r := checkSteps(t, steps)
	if len(r.Violations) != 0 {
		t.Fatalf("violations %v", r.Violations)
	}
	if len(r.Calls) != 5 || r.Answered != 2 || r.Unanswered != 2 || r.InProgress != 1 || r.Partial != 1 {
		t.Fatalf("calls %d answered %d unanswered %d in progress %d partial %d", len(r.Calls), r.Answered, r.Unanswered, r.InProgress, r.Partial)
	}
	want := []CauseCount{{16, 2}, {17, 1}}
	if fmt.Sprint(r.ByCause) != fmt.Sprint(want) {
		t.Errorf("causes %v, want %v", r.ByCause, want)
	}
	byID := map[int]*Call{}
	for _, c := range r.Calls {
		byID[c.ID] = c
	}
	if c := byID[2]; c.Called != "100" || c.End != EndReleased || c.EndFrame != 6 || c.ReleasedBy != 1 || c.Messages != 5 {
		t.Errorf("call 2: %+v", *c)
	}
	if c := byID[3]; c.End != EndReleased || c.Cause != 17 || c.ReleasedBy != 2 || c.Answered {
		t.Errorf("call 3: %+v", *c)
	}
	if c := byID[5]; c.End != EndReset || c.EndFrame != 13 {
		t.Errorf("call 5: %+v", *c)
	}
	if c := byID[1]; !c.Partial || c.End != EndReleased || !c.Answered {
		t.Errorf("call 1: %+v", *c)
	}
}
