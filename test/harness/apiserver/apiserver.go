// Package apiserver is test harness: it gives a test binary a real API
// server (envtest's kube-apiserver and etcd, built by hack/tool.sh envtest)
// that serves the CRDs the tests name.
package apiserver

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// missingAssets says what to do when KUBEBUILDER_ASSETS is not set.
const missingAssets = "KUBEBUILDER_ASSETS is not set; these tests need a real kube-apiserver and etcd.\n" +
	"Build them once and point at them with: export KUBEBUILDER_ASSETS=$(hack/tool.sh envtest)   (from the repository root, or run make test)"

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
	env := &envtest.Environment{CRDDirectoryPaths: crdDirs, ErrorIfCRDPathMissing: true}
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
	env := &envtest.Environment{CRDDirectoryPaths: crdDirs, ErrorIfCRDPathMissing: true}
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
