package libss7

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// variants are the two libss7 switch types with point codes in their own
// formats (ITU 14-bit, ANSI network-cluster-member).
var variants = []struct {
	name     string
	pcA, pcB string
}{
	{"itu", "1", "2"},
	{"ansi", "1-1-1", "1-1-2"},
}

// callSequence returns the ISUP messages of one CIC on one side, in order,
// as "dir MSG" strings, from the given events.
func callSequence(events []Event, cic int) []string {
	var seq []string
	for _, e := range events {
		if (e.Dir == "rx" || e.Dir == "tx") && e.CIC == cic {
			seq = append(seq, e.Dir+" "+e.Msg)
		}
	}
	return seq
}

// splitCalls cuts a CIC's sequence into calls, each starting at an IAM.
func splitCalls(seq []string) [][]string {
	var calls [][]string
	for _, s := range seq {
		if s == "rx IAM" || s == "tx IAM" {
			calls = append(calls, nil)
		}
		if len(calls) > 0 {
			calls[len(calls)-1] = append(calls[len(calls)-1], s)
		}
	}
	return calls
}

// callTimes measures each call from its IAM sent to its RLC received on
// the originating side, in ms.
func callTimes(events []Event) (min, max, sum int64) {
	start := map[int]int64{}
	min = -1
	for _, e := range events {
		switch {
		case e.Dir == "tx" && e.Msg == "IAM":
			start[e.CIC] = e.T
		case e.Dir == "rx" && e.Msg == "RLC":
			if t0, ok := start[e.CIC]; ok {
				d := e.T - t0
				sum += d
				if min < 0 || d < min {
					min = d
				}
				if d > max {
					max = d
				}
				delete(start, e.CIC)
			}
		}
	}
	return min, max, sum
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBackToBackCalls runs two libss7 exchanges over a socketpair, one
// answering and one originating 20 calls, in ITU and in ANSI, and checks
// every call went IAM, ACM, ANM, REL, RLC on both sides with the digits,
// natures of address and cause as sent. This proves farend itself before
// isupgw's MTP2 link is put in place of one of them.
func TestBackToBackCalls(t *testing.T) {
	skipSelfTest(t)
	t.Parallel()
	bin := Build(t)
	const calls = 20
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			a, b := SocketPair(t)
			answerer := Start(t, bin, Config{
				Variant: v.name, OPC: v.pcA, DPC: v.pcB, CICs: "1-31",
				Mode: []string{"answer"},
			}, a)
			originator := Start(t, bin, Config{
				Variant: v.name, OPC: v.pcB, DPC: v.pcA, CICs: "1-31",
				Mode: []string{"originate", fmt.Sprint(calls), "100"},
				Args: []string{"--await-grs", "--called", "4321", "--calling", "8765", "--called-nai", "3", "--calling-nai", "4", "--cause", "16"},
			}, b)

			ready, err := originator.Log().Wait(10*time.Second, Msg("local", "READY", -1))
			if err != nil {
				t.Fatalf("originator never ready: %v", err)
			}
			done, err := originator.Log().Wait(15*time.Second, Msg("local", "DONE", -1))
			if err != nil {
				t.Fatalf("originator not done: %v", err)
			}
			t.Logf("%s: link up and start-up resets answered after %d ms; %d calls offered at 100/s done in %d ms",
				v.name, ready.T, calls, done.Int("ms"))
			min, max, sum := callTimes(originator.Log().All())
			t.Logf("%s: per call, IAM sent to RLC received: min %d ms, mean %.1f ms, max %d ms", v.name, min, float64(sum)/calls, max)
			if done.Int("completed") != calls || done.Int("failed") != 0 {
				t.Errorf("DONE: %s", done.Line)
			}
			if err := originator.Wait(5 * time.Second); err != nil {
				t.Errorf("originator exit: %v", err)
			}
			// The answerer sees the link close and exits by itself.
			if err := answerer.Wait(5 * time.Second); err != nil {
				t.Errorf("answerer exit: %v", err)
			}

			wantCalled := "4321"
			if v.name == "itu" {
				wantCalled += "#" // libss7 appends ST in ITU and reports it back
			}
			for _, e := range answerer.Log().Select(Msg("rx", "IAM", -1)) {
				if e.Called != wantCalled || e.CalledNAI != 3 || e.Calling != "8765" || e.CallingNAI != 4 {
					t.Errorf("answerer got IAM %s", e.Line)
				}
			}
			for _, e := range answerer.Log().Select(Msg("rx", "REL", -1)) {
				if e.Cause != 16 {
					t.Errorf("answerer got REL %s", e.Line)
				}
			}

			wantOrig := []string{"tx IAM", "rx ACM", "rx ANM", "tx REL", "rx RLC"}
			wantAns := []string{"rx IAM", "tx ACM", "tx ANM", "rx REL", "tx RLC"}
			nOrig, nAns := 0, 0
			origEvents, ansEvents := originator.Log().All(), answerer.Log().All()
			for cic := 1; cic <= 31; cic++ {
				for _, c := range splitCalls(callSequence(origEvents, cic)) {
					nOrig++
					if !equal(c, wantOrig) {
						t.Errorf("originator CIC %d: %v, want %v", cic, c, wantOrig)
					}
				}
				for _, c := range splitCalls(callSequence(ansEvents, cic)) {
					nAns++
					if !equal(c, wantAns) {
						t.Errorf("answerer CIC %d: %v, want %v", cic, c, wantAns)
					}
				}
			}
			if nOrig != calls || nAns != calls {
				t.Errorf("calls seen: originator %d, answerer %d, want %d each", nOrig, nAns, calls)
			}

			for _, side := range []*Farend{originator, answerer} {
				exit, err := side.Log().Wait(time.Second, Msg("local", "EXIT", -1))
				if err != nil {
					t.Fatal(err)
				}
				rx, wireTx := exit.Counters("rx"), exit.Counters("wire_tx")
				// Each GRS sent (libss7 sends ANSI GRS twice) is answered by one GRA.
				if wireTx["GRS"] == 0 || rx["GRA"] != wireTx["GRS"] {
					t.Errorf("%s: %d GRS sent, %d GRA received", side.name, wireTx["GRS"], rx["GRA"])
				}
				if exit.Int("errors") != 0 || exit.Int("unexpected") != 0 || rx["UCIC"] != 0 || rx["CFN"] != 0 {
					t.Errorf("%s: %s", side.name, exit.Line)
				}
			}
		})
	}
}

// skipSelfTest keeps the farend-against-farend checks (libss7 on both ends,
// no isupgw) out of the default run: they fail intermittently inside libss7
// (an originating libss7 sends RSC right after its first IAM, its GRS then
// goes unanswered), which says nothing about isupgw. ISUPGW_LIBSS7_SELFTEST=1
// runs them when farend itself changes.
func skipSelfTest(t *testing.T) {
	t.Helper()
	if os.Getenv("ISUPGW_LIBSS7_SELFTEST") != "1" {
		t.Skip("farend against farend (libss7 on both ends) is intermittent inside libss7; set ISUPGW_LIBSS7_SELFTEST=1 to run it")
	}
}
