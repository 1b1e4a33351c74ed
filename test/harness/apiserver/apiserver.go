// Package apiserver is test harness: it gives a test binary a real API
// server (envtest's kube-apiserver and etcd, built by hack/tool.sh envtest)
// that serves the CRDs the tests name.
package apiserver

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// missingAssets says what to do when KUBEBUILDER_ASSETS is not set.
const missingAssets = "KUBEBUILDER_ASSETS is not set; these tests need a real kube-apiserver and etcd.\n" +
	"Build them once and point at them with: export KUBEBUILDER_ASSETS=$(hack/tool.sh envtest)   (from the repository root, or run make test)"

// StartTimeout bounds each process of an API server (etcd, then
// kube-apiserver) becoming ready, unless
// KUBEBUILDER_CONTROLPLANE_START_TIMEOUT says otherwise. envtest's
// default, 20 s, fits one API server on an idle machine, where
// kube-apiserver is ready within a few seconds. `make test` runs the test
// binaries of two packages at once (go test's -p, one per CPU on two
// cores), and a package may start several servers at once (its parallel
// tests), beside the end-to-end suite's control planes and a demo's that
// may still be up; each start then waits its turn for the CPU many times
// over, and a 20 s bound failed a test that passes in 9 s alone. Two
// minutes is that with headroom; a server that is not ready by then has
// failed.
const StartTimeout = 2 * time.Minute

// StopTimeout bounds each process of an API server stopping, unless
// KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT says otherwise: on the loaded
// machine StartTimeout describes, etcd and kube-apiserver may take longer
// than envtest's default 20 s to flush and exit.
const StopTimeout = time.Minute

// envtest's own variables for the two bounds
// (sigs.k8s.io/controller-runtime v0.23.1, pkg/envtest/server.go).
const (
	startTimeoutEnv = "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT"
	stopTimeoutEnv  = "KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT"
)

// environment is an API server serving the CRDs in crdDirs, started and
// stopped within StartTimeout and StopTimeout unless envtest's variables
// set them.
func environment(crdDirs []string) *envtest.Environment {
	env := &envtest.Environment{CRDDirectoryPaths: crdDirs, ErrorIfCRDPathMissing: true}
	if os.Getenv(startTimeoutEnv) == "" {
		env.ControlPlaneStartTimeout = StartTimeout
	}
	if os.Getenv(stopTimeoutEnv) == "" {
		env.ControlPlaneStopTimeout = StopTimeout
	}
	return env
}

// Main is a TestMain: it starts one API server serving the CRDs in crdDirs
// (relative to the test's package folder), hands it to started, runs the
// tests, stops the server and exits with the tests' code. Without
// KUBEBUILDER_ASSETS, or when the server does not start, the binary fails
// saying why. When only benchmarks run (-run '^$'), no server is started.
func Main(m *testing.M, started func(*envtest.Environment), crdDirs ...string) {
	flag.Parse()
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() == "^$" {
		os.Exit(m.Run())
	}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "FAIL:", missingAssets)
		os.Exit(1)
	}
	env := environment(crdDirs)
	if _, err := env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: cannot start the API server:", err)
		os.Exit(1)
	}
	started(env)
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot stop the API server:", err)
	}
	os.Exit(code)
}

// Start starts an API server serving the CRDs in crdDirs for one test and
// stops it when the test ends. Without KUBEBUILDER_ASSETS the test fails
// saying how to build them.
func Start(t testing.TB, crdDirs ...string) *envtest.Environment {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal(missingAssets)
	}
	env := environment(crdDirs)
	if _, err := env.Start(); err != nil {
		t.Fatalf("cannot start the API server: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Logf("cannot stop the API server: %v", err)
		}
	})
	return env
}
