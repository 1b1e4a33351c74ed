package poolcapacity_test

import (
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/burstpool/burstpool/test/harness/apiserver"
)

var (
	env *envtest.Environment
	cfg *rest.Config
)

// TestMain runs the package's tests against a real API server and etcd
// serving the provider's CRDs and CapacityBuffer's; benchmarks alone (make bench) need none.
func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	apiserver.Main(m, func(e *envtest.Environment) { env, cfg = e, e.Config },
		filepath.Join("..", "..", "..", "package", "provider", "crds"),
		// The CapacityBuffer a pool's warm slots may be held by, whose
		// replicas the provider keeps.
		filepath.Join("..", "..", "..", "test", "crds", "upstream", "autoscaling.x-k8s.io_capacitybuffers.yaml"))
}
