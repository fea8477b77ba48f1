package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/isupgw/isupgw/internal/config"
)

// Every misuse of the command line is a usage error: exit status 2 (never 3,
// which is Code Red), a message naming what was expected, and where the help is.
func TestCommandLineMisuse(t *testing.T) {
	cases := []struct {
		args   []string
		status int
		msg    string // in the error
		help   string // the help pointer printed after it
	}{
		{nil, 2, "no command given (want one of bench, circuits, config, decode, demo, load, replay, run, status, trace, version)", "isupgw --help"},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"; want one of bench, circuits, config,`, "isupgw --help"},
		{[]string{"stauts"}, 2, `unknown command "stauts" (did you mean "status"?)`, "isupgw --help"},
		{[]string{"help", "nope"}, 2, `unknown command "nope"`, "isupgw --help"},
		{[]string{"--bogus"}, 2, "flag provided but not defined: -bogus", "isupgw --help"},
		{[]string{"run", "a.yaml"}, 2, `run: unexpected argument "a.yaml" (run takes no arguments; did you mean --config a.yaml?)`, "isupgw run --help"},
		{[]string{"run", "now"}, 2, `run: unexpected argument "now" (run takes no arguments)`, "isupgw run --help"},
		{[]string{"run", "--bogus"}, 2, "run: flag provided but not defined: -bogus", "isupgw run --help"},
		{[]string{"run", "--drain-timeout", "soon"}, 2, `run: invalid value "soon" for flag -drain-timeout`, "isupgw run --help"},
		{[]string{"status", "gw1"}, 2, `status: unexpected argument "gw1" (status takes no arguments)`, "isupgw status --help"},
		{[]string{"demo", "60s"}, 2, `demo: unexpected argument "60s"`, "isupgw demo --help"},
		{[]string{"load", "127.0.0.1:7700"}, 2, `load: unexpected argument "127.0.0.1:7700"`, "isupgw load --help"},
		{[]string{"bench", "out"}, 2, `bench: unexpected argument "out"`, "isupgw bench --help"},
		{[]string{"version", "--short"}, 2, "version: flag provided but not defined: -short", "isupgw version --help"},
		{[]string{"version", "x"}, 2, `version: unexpected argument "x"`, "isupgw version --help"},
		{[]string{"replay"}, 2, "replay: missing one capture FILE", "isupgw replay --help"},
		{[]string{"replay", "a.pcap", "b.pcap"}, 2, `replay: 2 arguments ["a.pcap" "b.pcap"] (want one capture FILE)`, "isupgw replay --help"},
		{[]string{"decode", "--bogus", "00"}, 2, "decode: flag provided but not defined: -bogus", "isupgw decode --help"},
		{[]string{"decode", "0100", "--bogus"}, 2, "decode: flag provided but not defined: -bogus", "isupgw decode --help"},
		{[]string{"config"}, 2, "config: want a subcommand: check, default", "isupgw config --help"},
		{[]string{"config", "chek", "a.yaml"}, 2, `unknown command "config chek" (did you mean "config check"?)`, "isupgw config --help"},
		{[]string{"config", "check"}, 2, "config check: missing a configuration FILE", "isupgw config check --help"},
		{[]string{"config", "default", "out.yaml"}, 2, `config default: unexpected argument "out.yaml"`, "isupgw config default --help"},
		// Not usage errors: the command ran and failed.
		{[]string{"decode", "zz"}, 1, `"zz" is neither a file nor hex`, ""},
		{[]string{"config", "check", "/nonexistent/isupgw.yaml"}, 1, "config check: 1 of 1 files have errors", ""},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := run(t, "", tc.args...)
			if got := exitStatus(err); got != tc.status {
				t.Errorf("exit status %d, want %d (err %v)", got, tc.status, err)
			}
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.msg)
			}
			var rep bytes.Buffer
			report(&rep, err)
			if !strings.HasPrefix(rep.String(), "isupgw: "+err.Error()+"\n") {
				t.Errorf("report %q does not start with the error", rep.String())
			}
			if hasHelp := strings.Contains(rep.String(), "Run '"+tc.help+"' for usage."); tc.help != "" && !hasHelp {
				t.Errorf("report %q lacks the help pointer %q", rep.String(), tc.help)
			} else if tc.help == "" && strings.Contains(rep.String(), "for usage") {
				t.Errorf("report %q points at the help for a failure that is not a usage error", rep.String())
			}
		})
	}
}

// Code Red (and load's "did not keep up") keep their own statuses; other
// errors are 1.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("boom"), 1},
		{cli.Exit("code red: restart required", 3), 3},
		{usagef("", "bad"), 2},
	} {
		if got := exitStatus(tc.err); got != tc.want {
			t.Errorf("exitStatus(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// Flags given after the arguments are parsed as flags, not taken as file
// names or hex.
func TestFlagsAfterArguments(t *testing.T) {
	const rel = "23010C0204028 2AA2701 0200"
	out, _, err := run(t, "", "decode", rel, "--json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, `{"cic":291,"type":"REL"`) {
		t.Errorf("decode HEX --json printed %q, want JSON", out)
	}
	// A flag's value moves with it.
	if _, _, err := run(t, "", "decode", "00", "--variant", "q767"); err == nil || !strings.Contains(err.Error(), `unknown variant "q767"`) {
		t.Errorf("decode 00 --variant q767: err = %v, want the variant rejected", err)
	}
	// After "--" everything is an argument.
	if _, _, err := run(t, "", "decode", "--", "--json"); err == nil || !strings.Contains(err.Error(), `"--json" is neither a file nor hex`) {
		t.Errorf("decode -- --json: err = %v, want --json taken as an argument", err)
	}
	capt := filepath.Join("..", "..", "testdata", "example-itu.pcap")
	out, _, err = run(t, "", "replay", capt, "--no-flow")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "summary of ") {
		t.Errorf("replay FILE --no-flow printed more than the summary:\n%s", out)
	}
	full, _, _ := run(t, "", "replay", capt)
	if len(out) >= len(full) {
		t.Errorf("replay FILE --no-flow printed as much as without it (%d >= %d bytes)", len(out), len(full))
	}
}

func TestReorderArgs(t *testing.T) {
	app := newApp(nil, nil, nil)
	for _, tc := range []struct{ in, want string }{
		{"isupgw", "isupgw"},
		{"isupgw --version", "isupgw --version"},
		{"isupgw decode x.cap --json", "isupgw decode --json -- x.cap"},
		{"isupgw decode x.cap --variant ansi y.cap", "isupgw decode --variant ansi -- x.cap y.cap"},
		{"isupgw decode x.cap --variant=ansi", "isupgw decode --variant=ansi -- x.cap"},
		{"isupgw decode - --json", "isupgw decode --json -- -"},
		{"isupgw decode a -- --json b", "isupgw decode -- a --json b"},
		{"isupgw replay x.pcap --to 127.0.0.1:2905 --speed 0", "isupgw replay --to 127.0.0.1:2905 --speed 0 -- x.pcap"},
		{"isupgw replay --ni -1 x.pcap", "isupgw replay --ni -1 -- x.pcap"},
		{"isupgw config check a.yaml --help", "isupgw config check --help"},
		{"isupgw decode x -h", "isupgw decode -h"},
		{"isupgw run --config a.yaml", "isupgw run --config a.yaml"},
		{"isupgw nope x --json", "isupgw nope x --json"},
	} {
		got := strings.Join(reorderArgs(app, strings.Fields(tc.in)), " ")
		if got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		out, _, err := run(t, "", args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "isupgw ") || !strings.HasPrefix(lines[1], "commit ") ||
			lines[2] != "built with "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH {
			t.Errorf("%v printed\n%s", args, out)
		}
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-12-01T20:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	var b bytes.Buffer
	buildInfoFrom(bi, true, "", "").write(&b)
	want := "isupgw v1.2.3\ncommit 0123abcd (2026-12-01T20:00:00Z) with uncommitted changes\nbuilt with go1.26.8 " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	if b.String() != want {
		t.Errorf("from build info:\n%s\nwant\n%s", b.String(), want)
	}
	// Link-time values win: the container build has no VCS information.
	if got := buildInfoFrom(bi, true, "v2.0.0", "feed"); got.Version != "v2.0.0" || got.Commit != "feed" {
		t.Errorf("link-time values ignored: %+v", got)
	}
	if got := buildInfoFrom(nil, false, "", ""); got.Version != "(devel)" || got.Go != runtime.Version() {
		t.Errorf("without build info: %+v", got)
	}
}

func TestHelpStillWorks(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"help", "run"}, {"run", "--help"}, {"decode", "x", "--help"}, {"config", "check", "--help"}} {
		out, _, err := run(t, "", args...)
		if err != nil || exitStatus(err) != 0 {
			t.Errorf("%v: err %v", args, err)
		}
		if !strings.Contains(out, "USAGE") && !strings.Contains(out, "NAME") {
			t.Errorf("%v printed no help:\n%s", args, out)
		}
	}
	out, _, _ := run(t, "", "--help")
	for _, name := range []string{"config", "version"} {
		if !slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), name) }) {
			t.Errorf("help lacks the %s command:\n%s", name, out)
		}
	}
}

func TestConfigCheckAndDefault(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.yaml")
	good := filepath.Join(dir, "good.yaml")
	def, _, err := run(t, "", "config", "default")
	if err != nil {
		t.Fatal(err)
	}
	if def != string(config.DefaultYAML()) || !strings.Contains(def, "# ") {
		t.Fatalf("config default printed\n%s\nwant the embedded default with its comments", def)
	}
	if err := os.WriteFile(good, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(strings.Replace(def, "point_code: 1 ", "pointcode: 1 ", 1), `cics: ["1-31"]`, `cics: ["31-1"]`, 1)
	if err := os.WriteFile(broken, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "", "config", "check", good)
	if err != nil || !strings.HasPrefix(out, good+": ok: point code 1, 1 circuit groups with 31 circuits, 1 M3UA peers") {
		t.Errorf("check of the default: err %v, printed %q", err, out)
	}
	out, stderr, err := run(t, "", "config", "check", good, broken)
	if exitStatus(err) != 1 || err.Error() != "config check: 1 of 2 files have errors" {
		t.Errorf("err %v (status %d), want 1 of 2 files with errors, status 1", err, exitStatus(err))
	}
	if !strings.Contains(out, good+": ok") {
		t.Errorf("the good file is not reported ok: %q", out)
	}
	lineOf := func(sub string) int { return strings.Count(bad[:strings.Index(bad, sub)], "\n") + 1 }
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 2 || lines[0] != fmt.Sprintf("%s:%d: pointcode: unknown field \"pointcode\" (did you mean point_code?)", broken, lineOf("pointcode")) ||
		lines[1] != fmt.Sprintf("%s:%d: circuit_groups[0].cics[0]: CIC range \"31-1\" is reversed (want first <= last)", broken, lineOf(`"31-1"`)) {
		t.Errorf("errors printed:\n%s", stderr)
	}
}
