package libss7

import (
	"testing"
	"time"
)

// runCalls starts an answering and an originating farend and waits for the
// originator's DONE; it returns both sides' events.
func runCalls(t *testing.T, bin, variant, pcA, pcB string, calls int, answerArgs, originateArgs []string) (orig, ans []Event, done Event) {
	t.Helper()
	a, b := SocketPair(t)
	answerer := Start(t, bin, Config{Variant: variant, OPC: pcA, DPC: pcB, CICs: "1-31",
		Mode: []string{"answer"}, Args: answerArgs}, a)
	originator := Start(t, bin, Config{Variant: variant, OPC: pcB, DPC: pcA, CICs: "1-31",
		Mode: []string{"originate", itoa(calls), "200"}, Args: append([]string{"--await-grs"}, originateArgs...)}, b)
	done, err := originator.Log().Wait(15*time.Second, Msg("local", "DONE", -1))
	if err != nil {
		t.Fatalf("originator not done: %v", err)
	}
	if err := originator.Wait(5 * time.Second); err != nil {
		t.Errorf("originator exit: %v", err)
	}
	if err := answerer.Wait(5 * time.Second); err != nil {
		t.Errorf("answerer exit: %v", err)
	}
	return originator.Log().All(), answerer.Log().All(), done
}

// checkCalls checks every call on every CIC of one side went as want, and
// that there were n calls.
func checkCalls(t *testing.T, side string, events []Event, n int, want []string) {
	t.Helper()
	got := 0
	for cic := 1; cic <= 31; cic++ {
		for _, c := range splitCalls(callSequence(events, cic)) {
			got++
			if !equal(c, want) {
				t.Errorf("%s CIC %d: %v, want %v", side, cic, c, want)
			}
		}
	}
	if got != n {
		t.Errorf("%s: %d calls, want %d", side, got, n)
	}
}

// TestBackToBackReleases covers a call with CPG released by the called
// side, and a call released before answer (Q.764 2.3), in ITU and ANSI.
func TestBackToBackReleases(t *testing.T) {
	skipSelfTest(t)
	t.Parallel()
	bin := Build(t)
	const calls = 4
	for _, v := range variants {
		t.Run(v.name+"/cpg-called-releases", func(t *testing.T) {
			t.Parallel()
			orig, ans, done := runCalls(t, bin, v.name, v.pcA, v.pcB, calls,
				[]string{"--cpg", "--hold", "20", "--cause", "31"},
				[]string{"--hold", "5000"})
			if done.Int("completed") != calls {
				t.Errorf("DONE: %s", done.Line)
			}
			checkCalls(t, "originator", orig, calls, []string{"tx IAM", "rx ACM", "rx CPG", "rx ANM", "rx REL", "tx RLC"})
			checkCalls(t, "answerer", ans, calls, []string{"rx IAM", "tx ACM", "tx CPG", "tx ANM", "tx REL", "rx RLC"})
			for _, e := range orig {
				if e.Dir == "rx" && e.Msg == "CPG" && e.Event != 1 {
					t.Errorf("CPG event: %s", e.Line)
				}
				if e.Dir == "rx" && e.Msg == "REL" && e.Cause != 31 {
					t.Errorf("REL cause: %s", e.Line)
				}
			}
		})
		t.Run(v.name+"/rejected", func(t *testing.T) {
			t.Parallel()
			orig, ans, done := runCalls(t, bin, v.name, v.pcA, v.pcB, calls,
				[]string{"--answer", "reject", "--reject-cause", "17"}, nil)
			if done.Int("failed") != calls || done.Int("answered") != 0 {
				t.Errorf("DONE: %s", done.Line)
			}
			checkCalls(t, "originator", orig, calls, []string{"tx IAM", "rx REL", "tx RLC"})
			checkCalls(t, "answerer", ans, calls, []string{"rx IAM", "tx REL", "rx RLC"})
			for _, e := range orig {
				if e.Dir == "rx" && e.Msg == "REL" && e.Cause != 17 {
					t.Errorf("REL cause: %s", e.Line)
				}
			}
		})
	}
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}
