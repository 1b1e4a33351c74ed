package main

import (
	"testing"

	"github.com/burstpool/burstpool/test/harness/podargs"
)

// TestCLIListensInPod checks where the function listens (gRPC, metrics)
// when a pod runs it with only the args of a DeploymentRuntimeConfig, which
// replace the image's default arguments (see package podargs): Crossplane
// must reach the gRPC port on the pod's address, Prometheus the metrics.
func TestCLIListensInPod(t *testing.T) {
	podargs.Check(t, func() (any, func() []string) {
		c := &CLI{}
		return c, func() []string { return []string{c.Address, c.MetricsAddress} }
	}, []podargs.Case{
		{Name: "NoArguments", Want: []string{":9443", ":8080"}},
		{Name: "RuntimeConfigArgs", Args: []string{"--debug"}, Want: []string{":9443", ":8080"}},
		{Name: "LocalRun", Args: []string{"--address=127.0.0.1:9443", "--metrics-address="}, Want: []string{"127.0.0.1:9443", ""}},
	})
}
