package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Machine describes where the benchmark ran.
type Machine struct {
	CPUs       int     `json:"nproc"`
	CPUModel   string  `json:"cpu_model"`
	MemoryMB   int     `json:"memory_mb"`
	GoVersion  string  `json:"go_version"`
	Kernel     string  `json:"kernel"`
	Commit     string  `json:"commit,omitempty"`
	LoadBefore float64 `json:"load_avg_before"` // 1-minute load average when the run started
	LoadAfter  float64 `json:"load_avg_after"`
	// SpeedMBs is the CPUs' speed at the bench's start (cpuSpeed), the
	// reference of each run's.
	SpeedMBs float64 `json:"cpu_speed_mb_per_s,omitempty"`
}

// Describe reads the machine's description.
func Describe() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadBefore: loadAvg()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.Atoi(f[1])
				m.MemoryMB = kb / 1024
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		m.Commit = strings.TrimSpace(string(out))
	}
	return m
}

// Line is the description in one line.
func (m Machine) Line() string {
	return fmt.Sprintf("%d CPUs (%s), %d MB, %s, Linux %s, load average %.2f, CPU speed %.0f MB/s", m.CPUs, m.CPUModel, m.MemoryMB, m.GoVersion, m.Kernel, m.LoadBefore, m.SpeedMBs)
}

// loadAvg is the 1-minute load average (-1 if unknown).
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// waitQuiet polls the load average every 30 s until it is below limit or max
// has passed; the results say under what load they were taken either way.
func waitQuiet(ctx context.Context, limit float64, max time.Duration, logf func(string, ...any)) {
	deadline := time.Now().Add(max)
	for {
		l := loadAvg()
		if l < 0 || l < limit {
			return
		}
		if time.Now().After(deadline) {
			logf("bench: load average still %.2f after waiting %v: measuring anyway", l, max)
			return
		}
		logf("bench: load average %.2f >= %.2f: waiting (up to %v more)", l, limit, time.Until(deadline).Round(time.Second))
		select {
		case <-ctx.Done():
			return
		case <-time.After(30 * time.Second):
		}
	}
}
