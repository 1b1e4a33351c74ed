// Command warmtrace writes the demand trace of make bench-warm,
// examples/warm/trace.csv, from the deterministic generator of package
// test/warmweek: three weeks of history and the measured week, each with
// its own seed. Run it from the repository's root to regenerate the file:
//
//	go run ./test/cmd/warmtrace
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/burstpool/burstpool/test/warmweek"
)

func main() {
	out := flag.String("o", warmweek.TracePath, "file to write")
	flag.Parse()
	f, err := os.Create(*out)
	if err != nil {
		fail(err)
	}
	if err := warmweek.WriteShipped(f); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "warmtrace:", err)
	os.Exit(1)
}
