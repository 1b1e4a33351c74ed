// Command xrdgen builds apis/definition.yaml (go generate runs it): it writes
// the XPool CompositeResourceDefinition from the Pool claim CRD that
// controller-gen generates from apis/pool/v1alpha1.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/burstpool/burstpool/build/xrd"
)

func main() {
	in := flag.String("crd", "apis/crds/e6data.io_pools.yaml", "claim CRD to read")
	out := flag.String("out", "apis/definition.yaml", "XRD to write")
	flag.Parse()

	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "xrdgen:", err)
		os.Exit(1)
	}
}

// run writes the XRD of the claim CRD in the file in to the file out.
func run(in, out string) error {
	crd, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	b, err := xrd.FromCRD(crd, xrd.Names{CompositeKind: "XPool", CompositePlural: "xpools", DefaultComposition: "pool-compose"})
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}
