package replay

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Progress draws a one-line progress bar (meant for a terminal's stderr):
// "\r<label> [#####.....]  50% 12.0/24.0 MiB". Redraws are limited to ten a
// second except the last one. Safe for concurrent use.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	unit  string // "MiB" for bytes, "" for counts
	width int
	now   func() time.Time
	last  time.Time
	drawn bool
}

// NewProgress returns a bar for bytes (unit "MiB") or counts (unit "").
func NewProgress(w io.Writer, label, unit string) *Progress {
	return &Progress{w: w, label: label, unit: unit, width: 30, now: time.Now}
}

// Update redraws the bar for done out of total.
func (p *Progress) Update(done, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.now()
	if p.drawn && done < total && t.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last, p.drawn = t, true
	io.WriteString(p.w, "\r"+p.render(done, total))
}

// Finish erases the bar.
func (p *Progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", len(p.render(0, 0))+12))
		p.drawn = false
	}
}

func (p *Progress) render(done, total int64) string {
	frac := 0.0
	if total > 0 {
		frac = min(max(float64(done)/float64(total), 0), 1)
	}
	n := int(frac * float64(p.width))
	bar := strings.Repeat("#", n) + strings.Repeat(".", p.width-n)
	amount := fmt.Sprintf("%d/%d", done, total)
	if p.unit == "MiB" {
		amount = fmt.Sprintf("%.1f/%.1f MiB", float64(done)/(1<<20), float64(total)/(1<<20))
	}
	return fmt.Sprintf("%s [%s] %3d%% %s", p.label, bar, int(frac*100), amount)
}
