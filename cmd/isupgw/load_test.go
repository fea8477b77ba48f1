package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/isupgw/isupgw/loadgen"
)

func TestLoadFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dpc", "2"}, "exactly one of --rate, --ramp and --steps"},
		{[]string{"--dpc", "2", "--rate", "10", "--ramp", "1:2:3s"}, "exactly one of"},
		{[]string{"--dpc", "2", "--ramp", "1:2"}, "FROM:TO:DURATION"},
		{[]string{"--dpc", "2", "--steps", "10"}, "RATE:DURATION"},
		{[]string{"--rate", "10"}, "--dpc or --route"},
		{[]string{"--dpc", "x", "--rate", "10"}, "point code"},
		{[]string{"--dpc", "2", "--rate", "10", "--called", "49-30"}, "not a digit"},
		{[]string{"--answer", "--addr", "127.0.0.1:1,127.0.0.1:2"}, "--answer takes one --addr"},
		{[]string{"--addr", " , ", "--dpc", "2", "--rate", "10"}, "--addr: no address"},
	} {
		var out, errb bytes.Buffer
		err := newApp(strings.NewReader(""), &out, &errb).Run(append([]string{"isupgw", "load"}, c.args...))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

func TestLoadNoGateway(t *testing.T) {
	var out, errb bytes.Buffer
	err := newApp(strings.NewReader(""), &out, &errb).Run([]string{"isupgw", "load", "--addr", "127.0.0.1:1", "--dpc", "2", "--rate", "10", "--duration", "1s"})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("%v", err)
	}
}

// `isupgw load --dpc` takes the point code as the configuration writes it:
// a number as it is, 3-8-3 resolved against the gateway's groups.
func TestLoadResolvesDashedPointCodes(t *testing.T) {
	a, _ := startTwo(t)
	o := loadgen.Options{Network: "tcp", Address: a.api, Token: "secret", App: "load"}
	got, err := resolveDPCs(context.Background(), o, []string{"2", "0-0-2"})
	if err != nil || len(got) != 2 || got[0] != 2 || got[1] != 2 {
		t.Fatalf("resolved %v, %v; want [2 2]", got, err)
	}
	if _, err := resolveDPCs(context.Background(), o, []string{"0-0-9"}); err == nil || !strings.Contains(err.Error(), "no circuit group of the gateway has point code 0-0-9") {
		t.Errorf("an unknown point code: %v", err)
	}
}

// Several addresses, none reachable: the error names each.
func TestLoadNoGatewayOfSeveral(t *testing.T) {
	var out, errb bytes.Buffer
	err := newApp(strings.NewReader(""), &out, &errb).Run([]string{"isupgw", "load", "--addr", "127.0.0.1:1", "--addr", "127.0.0.1:2,127.0.0.1:3",
		"--dpc", "2", "--rate", "10", "--duration", "1s"})
	for _, a := range []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"} {
		if err == nil || !strings.Contains(err.Error(), a) {
			t.Fatalf("%v (want %s named)", err, a)
		}
	}
}
