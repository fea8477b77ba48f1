package bench

import (
	"crypto/sha256"
	"runtime"
	"sync"
	"time"
)

// The benchmark's machine is shared: on the machine its results were taken
// on (a VM whose kernel reports no steal time) runs of one binary differed
// by up to 1.8x, and a run's rounds by more than the modes they compare
// (results/notes.md). So the bench measures the CPUs' speed before the
// capacity search and before and after each overload run, with the
// gateways stopped, and results.md states each run's speed as a share of
// the first: a round whose CPUs were slowed by other work shows there.
// It sees the CPUs only: in the table at e3fe5e2 they stayed within
// 84-114 % while one mode's goodput moved by up to 1.5x.

// speedBytes is what each CPU hashes per measure: about 0.1-0.3 s on a
// current CPU, long enough to see a host taking the CPUs away, short
// beside a run.
const speedBytes = 128 << 20

// cpuSpeed is the machine's CPU speed now: every CPU hashes speedBytes
// with SHA-256 at once (one goroutine each), in megabytes per second over
// them all.
func cpuSpeed() float64 {
	n := runtime.NumCPU()
	buf := make([]byte, 64<<10)
	var wg sync.WaitGroup
	start := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := sha256.New()
			for done := 0; done < speedBytes; done += len(buf) {
				h.Write(buf)
			}
			h.Sum(nil)
		}()
	}
	wg.Wait()
	return float64(n*speedBytes) / (1 << 20) / time.Since(start).Seconds()
}

// speedShare is a speed as a percentage of the reference (0 when either is
// not known).
func speedShare(speed, ref float64) float64 {
	if speed <= 0 || ref <= 0 {
		return 0
	}
	return 100 * speed / ref
}
