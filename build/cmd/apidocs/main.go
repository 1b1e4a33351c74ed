// Command apidocs builds the field references in docs/ (go generate runs it):
// it writes the Markdown field reference of a CRD, or, with -settings, the
// reference of the cluster settings an EnvironmentConfig gives the pool-compose
// function (from the function input's CRD).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/burstpool/burstpool/build/apidocs"
)

func main() {
	in := flag.String("crd", "", "CRD to document")
	out := flag.String("out", "", "Markdown file to write")
	title := flag.String("title", "API reference", "document title")
	settings := flag.Bool("settings", false, "document the function input's fields as EnvironmentConfig data")
	flag.Parse()

	if err := run(*in, *out, *title, *settings); err != nil {
		fmt.Fprintln(os.Stderr, "apidocs:", err)
		os.Exit(1)
	}
}

// run writes the reference of the CRD in the file in to the file out.
func run(in, out, title string, settings bool) error {
	crd, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var b []byte
	if settings {
		b, err = apidocs.SettingsMarkdown(crd, title, apidocs.SettingsIntro, "environmentConfig")
	} else {
		b, err = apidocs.Markdown(crd, title)
	}
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}
