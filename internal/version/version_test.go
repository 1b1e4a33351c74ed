package version

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestRegister(t *testing.T) {
	reg := prometheus.NewRegistry()
	if err := Register(reg, "provider"); err != nil {
		t.Fatal(err)
	}
	want := `# HELP burstpool_build_info The release the process runs (label version), always 1.
# TYPE burstpool_build_info gauge
burstpool_build_info{component="provider",version="dev"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "burstpool_build_info"); err != nil {
		t.Errorf("Register(provider): %v", err)
	}
}
