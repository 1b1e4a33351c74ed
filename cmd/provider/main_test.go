package main

import (
	"testing"

	"github.com/burstpool/burstpool/test/harness/podargs"
)

// TestCLIListensInPod checks where the provider serves metrics and probes
// when a pod runs it with only the args of a DeploymentRuntimeConfig, which
// replace the image's default arguments (see package podargs): the
// PodMonitor and the kubelet reach the pod's address, not its loopback.
func TestCLIListensInPod(t *testing.T) {
	podargs.Check(t, func() (any, func() []string) {
		c := &CLI{}
		return c, func() []string { return []string{c.MetricsAddress, c.HealthAddress} }
	}, []podargs.Case{
		{Name: "NoArguments", Want: []string{":8080", ":8081"}},
		{Name: "RuntimeConfigArgs", Args: []string{"--debug"}, Want: []string{":8080", ":8081"}},
		{Name: "LocalRun", Args: []string{"--metrics-address=127.0.0.1:18080", "--health-address=127.0.0.1:18081"}, Want: []string{"127.0.0.1:18080", "127.0.0.1:18081"}},
	})
}
