package lockedbuf

import (
	"strings"
	"sync"
	"testing"
)

// Writers and a reader at once (go test -race): every write lands whole.
func TestConcurrentWriteAndString(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("ab\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(b.String(), "ab\n"); got != 400 {
		t.Fatalf("%d writes, want 400", got)
	}
}
