package poolcapacity_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

var (
	env *envtest.Environment
	cfg *rest.Config
)

// TestMain runs the package's tests against a real API server and etcd.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "^$" {
		// Only benchmarks or examples run (make bench): no API server needed.
		os.Exit(m.Run())
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "FAIL: KUBEBUILDER_ASSETS is not set; these tests need a real kube-apiserver and etcd.\n"+
			"run: export KUBEBUILDER_ASSETS=$(hack/tool.sh envtest)   (from the repository root)")
		os.Exit(1)
	}
	ctrl.SetLogger(logr.Discard())
	env = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "..", "package", "provider", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "FAIL: cannot start the API server: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "cannot stop the API server: %v\n", err)
	}
	os.Exit(code)
}
