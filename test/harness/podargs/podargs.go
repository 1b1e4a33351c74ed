// Package podargs is test harness: it parses a binary's command line (a
// kong CLI) with the arguments a pod would run it with, so a test can check
// where the binary listens when a DeploymentRuntimeConfig sets the
// container's args.
//
// Crossplane builds a package's Deployment from the runtime config's
// deploymentTemplate, so `args: [--debug]` there becomes the container's
// args, and Kubernetes runs the image's entrypoint with those args in place
// of the image's default arguments, its Cmd ("Define a Command and
// Arguments for a Container", kubernetes.io). Addresses a pod needs must
// therefore be the binary's defaults.
package podargs

import (
	"testing"

	"github.com/alecthomas/kong"
	"github.com/google/go-cmp/cmp"
)

// Case is one command line and the addresses it must give.
type Case struct {
	Name string
	Args []string
	Want []string
}

// Check parses each case's Args into a fresh CLI from newCLI, and compares
// the addresses that its second result reads from the parsed CLI with Want.
func Check(t *testing.T, newCLI func() (cli any, addrs func() []string), cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			cli, addrs := newCLI()
			p, err := kong.New(cli)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Parse(tc.Args); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.Want, addrs()); diff != "" {
				t.Errorf("listen addresses for %q: -want, +got:\n%s", tc.Args, diff)
			}
		})
	}
}
