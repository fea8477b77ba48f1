package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEListsEveryMetric keeps the README's metrics table complete.
func TestREADMEListsEveryMetric(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append(Names(), OpsNames()...) {
		if !strings.Contains(string(b), "`"+name+"`") {
			t.Errorf("README.md does not list %s", name)
		}
	}
}

// TestPrintTable prints the README metrics table (ISUPGW_PRINT_METRICS=1 go test -run TestPrintTable -v).
func TestPrintTable(t *testing.T) {
	if os.Getenv("ISUPGW_PRINT_METRICS") == "" {
		t.Skip("set ISUPGW_PRINT_METRICS=1 to print the README table")
	}
	for _, d := range defs {
		kind := "gauge"
		if strings.HasSuffix(d.name, "_total") {
			kind = "counter"
		}
		t.Logf("| `%s` | %s | %s | %s |", d.name, kind, strings.Join(d.labels, ", "), d.help)
	}
}
