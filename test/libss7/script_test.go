package libss7

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

const stepTimeout = 5 * time.Second

// pair starts two farends on a socketpair: a script-driven one (point code
// pcA) and one with the given mode (pcB), and waits until both are ready.
func pair(t *testing.T, bin, variant, pcA, pcB string, modeB []string, argsB ...string) (a, b *Farend) {
	t.Helper()
	sa, sb := SocketPair(t)
	a = Start(t, bin, Config{Variant: variant, OPC: pcA, DPC: pcB, CICs: "1-40",
		Mode: []string{"script", "-"}, Args: []string{"--wire", "--await-grs"}}, sa)
	b = Start(t, bin, Config{Variant: variant, OPC: pcB, DPC: pcA, CICs: "1-31",
		Mode: modeB, Args: append([]string{"--wire", "--await-grs"}, argsB...)}, sb)
	for _, f := range []*Farend{a, b} {
		if _, err := f.Log().Wait(10*time.Second, Msg("local", "READY", -1)); err != nil {
			t.Fatalf("%s not ready: %v", f.name, err)
		}
	}
	return a, b
}

// expectation is one event a step waits for on one side.
type expectation struct {
	side  *Farend
	match Match
	check func(Event) string // "" when the event is as wanted
}

// step sends a script command to f and waits, on each side, for the
// expected events to come after it.
func step(t *testing.T, f *Farend, cmd string, want ...expectation) []Event {
	t.Helper()
	marks := map[*Farend]int{}
	for _, w := range want {
		if _, ok := marks[w.side]; !ok {
			marks[w.side] = w.side.Log().Mark()
		}
	}
	if err := f.Command(cmd); err != nil {
		t.Fatalf("%q: %v", cmd, err)
	}
	var got []Event
	for _, w := range want {
		e, err := w.side.Log().WaitAfter(marks[w.side], stepTimeout, w.match)
		if err != nil {
			t.Fatalf("%q: %s: %v", cmd, w.side.name, err)
		}
		if w.check != nil {
			if msg := w.check(e); msg != "" {
				t.Errorf("%q: %s: %s: %s", cmd, w.side.name, msg, e.Line)
			}
		}
		got = append(got, e)
	}
	return got
}

func range7hw(e Event) string {
	if e.Range != 7 || e.Type != 1 || e.Status != "11111111" {
		return "want range 7, hardware, all 8 circuits"
	}
	return ""
}

func range3m(e Event) string {
	if e.Range != 3 || e.Type != 0 || e.Status != "1111" {
		return "want range 3, maintenance, all 4 circuits"
	}
	return ""
}

func cause(n int) func(Event) string {
	return func(e Event) string {
		if e.Cause != n {
			return "wrong cause"
		}
		return ""
	}
}

// TestBackToBackSupervision drives circuit supervision and call release
// from a script against a farend that only answers, in ITU and ANSI:
// every message is acknowledged by libss7 on the other side as Q.764
// 2.8-2.10 asks, and calls cleared by RSC or GRS leave the circuits usable.
func TestBackToBackSupervision(t *testing.T) {
	skipSelfTest(t)
	t.Parallel()
	bin := Build(t)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			a, b := pair(t, bin, v.name, v.pcA, v.pcB, []string{"answer"})
			st := ""
			if v.name == "itu" {
				st = "#"
			}
			call := func(cic int, digits string) {
				t.Helper()
				step(t, a, "call "+strconv.Itoa(cic)+" "+digits,
					expectation{b, Msg("rx", "IAM", cic), func(e Event) string {
						if e.Called != digits+st {
							return "called digits"
						}
						return ""
					}},
					expectation{a, Msg("rx", "ANM", cic), nil})
			}

			step(t, a, "blo 5", expectation{b, Msg("rx", "BLO", 5), nil}, expectation{a, Msg("rx", "BLA", 5), nil})
			step(t, a, "ubl 5", expectation{b, Msg("rx", "UBL", 5), nil}, expectation{a, Msg("rx", "UBA", 5), nil})
			step(t, a, "cgb 1 7 hw", expectation{b, Msg("rx", "CGB", 1), range7hw}, expectation{a, Msg("rx", "CGBA", 1), range7hw})
			step(t, a, "cgu 1 7 hw", expectation{b, Msg("rx", "CGU", 1), range7hw}, expectation{a, Msg("rx", "CGUA", 1), range7hw})
			step(t, a, "cgb 10 3", expectation{b, Msg("rx", "CGB", 10), range3m}, expectation{a, Msg("rx", "CGBA", 10), range3m})
			step(t, a, "cgu 10 3", expectation{b, Msg("rx", "CGU", 10), range3m}, expectation{a, Msg("rx", "CGUA", 10), range3m})

			// RSC during a call releases it; the circuit takes a new call.
			call(12, "555")
			step(t, a, "rsc 12", expectation{b, Msg("rx", "RSC", 12), nil}, expectation{a, Msg("rx", "RLC", 12), nil})
			call(12, "5551")
			step(t, a, "rel 12 31", expectation{b, Msg("rx", "REL", 12), cause(31)}, expectation{a, Msg("rx", "RLC", 12), nil})

			// GRS over a range with a call in it: GRA, and the circuit is idle.
			call(13, "556")
			step(t, a, "grs 11 5", expectation{b, Msg("rx", "GRS", 11), nil}, expectation{a, Msg("rx", "GRA", 11), func(e Event) string {
				if e.Range != 5 || e.Status != "000000" {
					return "want range 5, nothing blocked"
				}
				return ""
			}})
			call(13, "5561")
			step(t, a, "rel 13", expectation{b, Msg("rx", "REL", 13), cause(16)}, expectation{a, Msg("rx", "RLC", 13), nil})

			// SUS and RES in an answered call.
			call(14, "557")
			step(t, a, "sus 14 net", expectation{b, Msg("rx", "SUS", 14), nil})
			step(t, a, "res 14 net", expectation{b, Msg("rx", "RES", 14), nil})
			step(t, a, "rel 14 16", expectation{b, Msg("rx", "REL", 14), cause(16)}, expectation{a, Msg("rx", "RLC", 14), nil})

			// An IAM for a CIC the far end does not have gets UCIC (Q.764 2.12).
			step(t, a, "call 35 999", expectation{b, Msg("tx", "UCIC", 35), nil}, expectation{a, Msg("rx", "UCIC", 35), nil})

			a.CloseInput()
			for _, f := range []*Farend{a, b} {
				if err := f.Wait(5 * time.Second); err != nil {
					t.Errorf("%s: %v", f.name, err)
				}
				exit, err := f.Log().Wait(time.Second, Msg("local", "EXIT", -1))
				if err != nil {
					t.Fatal(err)
				}
				if exit.Int("errors") != 0 || exit.Int("unexpected") != 0 {
					t.Errorf("%s: %s", f.name, exit.Line)
				}
			}
		})
	}
}

// TestBackToBackGlare makes both exchanges seize the same circuit at once
// (farend holds the far end's IAM until its own is out) and checks the
// Q.764 2.9.1.4 rule: the exchange with the higher point code controls the
// even circuits, the other the odd ones; the controlling side keeps its
// call, the other gives way, takes the incoming call and repeats its own
// attempt on another circuit.
func TestBackToBackGlare(t *testing.T) {
	skipSelfTest(t)
	t.Parallel()
	bin := Build(t)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			a, b := pair(t, bin, v.name, v.pcA, v.pcB, []string{"script", "-"})
			// a has the lower point code: it controls odd CICs, b even ones.
			for _, tc := range []struct {
				cic                int
				winner, loser      *Farend
				winnerCmd, loseCmd string
			}{
				{9, a, b, "glare 9 111", "call 9 222"},
				{10, b, a, "call 10 333", "glare 10 444"},
			} {
				ma, mb := a.Log().Mark(), b.Log().Mark()
				// a arms first (it holds b's IAM), then b calls.
				cmdA, cmdB := tc.winnerCmd, tc.loseCmd
				if tc.winner == b {
					cmdA, cmdB = tc.loseCmd, tc.winnerCmd
				}
				_ = a.Command(cmdA)
				if _, err := a.Log().WaitAfter(ma, stepTimeout, Msg("local", "GLARE_ARMED", tc.cic)); err != nil {
					t.Fatal(err)
				}
				_ = b.Command(cmdB)
				mark := map[*Farend]int{a: ma, b: mb}
				w, err := tc.winner.Log().WaitAfter(mark[tc.winner], stepTimeout, Msg("local", "DUAL_SEIZURE", tc.cic))
				if err != nil {
					t.Fatalf("CIC %d: %s: %v", tc.cic, tc.winner.name, err)
				}
				l, err := tc.loser.Log().WaitAfter(mark[tc.loser], stepTimeout, Msg("local", "DUAL_SEIZURE", tc.cic))
				if err != nil {
					t.Fatalf("CIC %d: %s: %v", tc.cic, tc.loser.name, err)
				}
				if w.Int("controlling") != 1 || l.Int("controlling") != 0 {
					t.Errorf("CIC %d: winner %s, loser %s", tc.cic, w.Line, l.Line)
				}
				// The winner's call is answered by the loser on the same CIC ...
				if _, err := tc.winner.Log().WaitAfter(mark[tc.winner], stepTimeout, Msg("rx", "ANM", tc.cic)); err != nil {
					t.Errorf("CIC %d: winner's call not answered: %v", tc.cic, err)
				}
				// ... and the loser repeats its attempt on another circuit.
				rep, err := tc.loser.Log().WaitAfter(mark[tc.loser], stepTimeout, Msg("local", "REPEAT", -1))
				if err != nil {
					t.Fatalf("CIC %d: no repeat attempt: %v", tc.cic, err)
				}
				if rep.CIC == tc.cic {
					t.Errorf("CIC %d: repeat on the same circuit", tc.cic)
				}
				if _, err := tc.winner.Log().WaitAfter(mark[tc.winner], stepTimeout, Msg("rx", "IAM", rep.CIC)); err != nil {
					t.Errorf("CIC %d: repeat attempt not seen: %v", tc.cic, err)
				}
				for _, f := range []*Farend{a, b} {
					n := f.Log().Count(func(e Event) bool {
						return e.Dir == "log" && strings.Contains(e.Text, "Dual seizure")
					})
					if n == 0 && f == tc.winner {
						t.Errorf("CIC %d: %s logged no dual seizure", tc.cic, f.name)
					}
				}
			}
		})
	}
}
