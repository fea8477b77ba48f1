package main

import (
	"runtime/debug"
	"testing"
)

func TestSetGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	env := map[string]string{}
	setGC(func(k string) string { return env[k] })
	if p := debug.SetGCPercent(100); p != gcPercent {
		t.Fatalf("GOGC unset: the runtime has %d, want %d", p, gcPercent)
	}

	// GOGC set: the runtime read it at start; setGC leaves it alone.
	env["GOGC"] = "150"
	debug.SetGCPercent(150)
	setGC(func(k string) string { return env[k] })
	if p := debug.SetGCPercent(100); p != 150 {
		t.Fatalf("GOGC=150: the runtime has %d, want it untouched", p)
	}
}
