package devplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/burstpool/burstpool/test/harness/localcp"
)

// FailsafeAccount is the fail-safe's service account in CrossplaneNS, as
// deploy/provider/failsafe.yaml names it.
const FailsafeAccount = "burstpool-failsafe"

// FailsafeArgs are the fail-safe's arguments on the local control plane:
// the shipped bounds, and the settings' openAfter for nodes no
// PoolCapacity claims.
var FailsafeArgs = []string{"--gate-bound=30s", "--grace=30s", "--open-after=5m", "--silence=20s", "--interval=1s"}

// startFailsafe applies deploy/provider/failsafe.yaml but its Deployment
// (the simulated nodes run no container) and runs the fail-safe in its
// place, as its service account, so that its roles and admission policy
// are the shipped ones.
func (s *Stack) startFailsafe() error {
	ctx := context.Background()
	raw, err := os.ReadFile(filepath.Join(s.cfg.Root, "deploy", "provider", "failsafe.yaml"))
	if err != nil {
		return err
	}
	objs, err := localcp.Decode(raw)
	if err != nil {
		return err
	}
	var keep []byte
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			continue
		}
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return err
		}
		keep = append(append(keep, "---\n"...), b...)
	}
	if err := localcp.Apply(ctx, s.Cluster.Config, keep); err != nil {
		return fmt.Errorf("cannot apply deploy/provider/failsafe.yaml: %w", err)
	}
	kubeconfig := filepath.Join(s.cfg.Dir, "failsafe.kubeconfig")
	if err := AccountKubeconfig(ctx, s.Client, s.Cluster.Config, FailsafeAccount, kubeconfig, 7*24*3600); err != nil {
		return err
	}
	ports, err := localcp.FreePorts(1)
	if err != nil {
		return err
	}
	s.FailsafeMetricsAddr = "127.0.0.1:" + strconv.Itoa(ports[0])
	s.Failsafe, err = start(filepath.Join(s.cfg.Dir, "logs"), FailsafeAccount, s.cfg.StopWithParent,
		[]string{"KUBECONFIG=" + kubeconfig}, filepath.Join(s.bin, "failsafe"),
		append([]string{"--metrics-address", s.FailsafeMetricsAddr}, FailsafeArgs...)...)
	if err != nil {
		return err
	}
	return localcp.WaitPort(ctx, s.FailsafeMetricsAddr, runtimeListening)
}

// FailsafeCount is the fail-safe's series name{labels} (labels as the text
// format writes them), zero before it is first counted.
func (s *Stack) FailsafeCount(ctx context.Context, name, labels string) (float64, error) {
	m, err := Scrape(ctx, s.FailsafeMetricsAddr, name)
	return m[labels], err
}
