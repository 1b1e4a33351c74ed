// Command apidocs writes the Markdown field reference of a CRD.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/burstpool/burstpool/internal/apidocs"
)

func main() {
	in := flag.String("crd", "", "CRD to document")
	out := flag.String("out", "", "Markdown file to write")
	title := flag.String("title", "API reference", "document title")
	flag.Parse()

	crd, err := os.ReadFile(*in)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	b, err := apidocs.Markdown(crd, *title)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
