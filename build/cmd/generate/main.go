// Command generate builds the files burstpool derives from its CRDs (go
// generate runs it): "xrd" writes the XPool CompositeResourceDefinition
// from the Pool claim CRD that controller-gen generates from
// apis/pool/v1alpha1; "reference" writes a Markdown field reference in
// docs/ of a CRD or, with --settings, of the cluster settings an
// EnvironmentConfig gives the pool-compose function (from the function
// input's CRD).
package main

import (
	"os"

	"github.com/alecthomas/kong"

	"github.com/burstpool/burstpool/build/apidocs"
	"github.com/burstpool/burstpool/build/xrd"
)

// CLI of the generator: one subcommand a kind of file.
type CLI struct {
	XRD       xrdCmd       `cmd:"" name:"xrd" help:"Write the XPool XRD of the Pool claim CRD."`
	Reference referenceCmd `cmd:"" help:"Write the Markdown field reference of a CRD."`
}

// files are the CRD a subcommand reads and the file it writes.
type files struct {
	CRD string `required:"" help:"CRD to read."`
	Out string `required:"" help:"File to write."`
}

// write writes what generate makes of the CRD to the output file.
func (f files) write(generate func(crd []byte) ([]byte, error)) error {
	crd, err := os.ReadFile(f.CRD)
	if err != nil {
		return err
	}
	b, err := generate(crd)
	if err != nil {
		return err
	}
	return os.WriteFile(f.Out, b, 0o644)
}

type xrdCmd struct {
	files
}

// Run writes the XRD of the claim CRD.
func (c *xrdCmd) Run() error {
	return c.write(func(crd []byte) ([]byte, error) { return xrd.FromCRD(crd, xrd.PoolNames) })
}

type referenceCmd struct {
	files
	Title    string `default:"API reference" help:"Document title."`
	Settings bool   `help:"Document the function input's fields as EnvironmentConfig data."`
}

// Run writes the field reference of the CRD.
func (c *referenceCmd) Run() error {
	return c.write(func(crd []byte) ([]byte, error) {
		if c.Settings {
			return apidocs.SettingsMarkdown(crd, c.Title, apidocs.SettingsIntro, "environmentConfig")
		}
		return apidocs.Markdown(crd, c.Title)
	})
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Description("Writes the files burstpool derives from its CRDs."))
	ctx.FatalIfErrorf(ctx.Run())
}
