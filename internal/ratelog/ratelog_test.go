package ratelog

import (
	"fmt"
	"testing"
	"time"
)

func TestOnePerPeriodPerKeyWithTheSuppressedCount(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(time.Second, func() time.Time { return now })
	if n, ok := l.Allow("a"); !ok || n != 0 {
		t.Fatalf("first a: %d %v", n, ok)
	}
	for i := 0; i < 5; i++ {
		if _, ok := l.Allow("a"); ok {
			t.Fatalf("a allowed again within the period (%d)", i)
		}
	}
	if _, ok := l.Allow("b"); !ok {
		t.Fatal("another key is limited by a's")
	}
	now = now.Add(time.Second)
	if n, ok := l.Allow("a"); !ok || n != 5 {
		t.Fatalf("a after the period: suppressed %d allowed %v, want 5 true", n, ok)
	}
	if _, ok := l.Allow("a"); ok {
		t.Fatal("a allowed twice in the new period")
	}
}

func TestKeysAreBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(time.Second, func() time.Time { return now })
	for i := 0; i < 10*maxKeys; i++ {
		l.Allow(fmt.Sprint(i))
	}
	if len(l.keys) > maxKeys {
		t.Fatalf("%d keys kept, want at most %d", len(l.keys), maxKeys)
	}
	if e := l.keys[overflowKey]; e == nil || e.suppressed == 0 {
		t.Fatalf("the reasons beyond the bound are not counted together: %+v", e)
	}
}
