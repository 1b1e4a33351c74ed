// Command warm ships at /warm in burstpool's runtime images and in its own
// helper image (ghcr.io/burstpool/warm, published by `make release`): the
// helper that warmup DaemonSets run on pool nodes. It has no dependencies beyond the
// standard library and is built static (CGO_ENABLED=0), so it runs in any
// image on any Linux node of its architecture, without a shell.
//
//	warm install DEST   copy this executable to DEST (mode 0755)
//	warm pause          block until SIGTERM or SIGINT, then exit 0
//	warm noop           exit 0 at once
//
// Run under any name other than "warm" (for example as the copy "noop" that
// install wrote), it exits 0 at once: that is how a warmup pod starts a
// container from an image it only wants pulled, whatever that image holds.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// The handler is installed before anything else runs, so a pod that is
	// stopped while starting still exits 0.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := run(ctx, os.Args, os.Executable, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
