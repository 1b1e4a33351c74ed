package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// name is the base name under which the helper acts on its arguments; under
// any other name it is a no-op.
const name = "warm"

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

const usage = `usage:
  warm install DEST   copy this executable to DEST (mode 0755)
  warm pause          block until SIGTERM or SIGINT, then exit 0
  warm noop           exit 0 at once
Under any other name than "warm" the executable exits 0 at once.
`

// run carries out one invocation and returns the process exit code. args is
// the full argument vector, args[0] included. executable tells where the
// running binary is, for install. pause returns when ctx is done, so the
// caller cancels ctx on SIGTERM and SIGINT.
func run(ctx context.Context, args []string, executable func() (string, error), stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.TrimSuffix(filepath.Base(args[0]), ".exe") != name {
		return exitOK
	}
	if len(args) < 2 {
		_, _ = fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch cmd, rest := args[1], args[2:]; cmd {
	case "noop":
		return exitOK
	case "help", "-h", "--help":
		_, _ = fmt.Fprint(stdout, usage)
		return exitOK
	case "install":
		if len(rest) != 1 || rest[0] == "" {
			_, _ = fmt.Fprint(stderr, "warm install: want exactly one destination path\n"+usage)
			return exitUsage
		}
		src, err := executable()
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "warm install: cannot find own executable: %v\n", err)
			return exitError
		}
		if err := install(src, rest[0]); err != nil {
			_, _ = fmt.Fprintf(stderr, "warm install: %v\n", err)
			return exitError
		}
		_, _ = fmt.Fprintf(stdout, "warm: installed %s\n", rest[0])
		return exitOK
	case "pause":
		if len(rest) != 0 {
			_, _ = fmt.Fprint(stderr, "warm pause: takes no arguments\n"+usage)
			return exitUsage
		}
		_, _ = fmt.Fprintln(stdout, "warm: paused until SIGTERM")
		<-ctx.Done()
		return exitOK
	default:
		_, _ = fmt.Fprintf(stderr, "warm: unknown command %q\n%s", cmd, usage)
		return exitUsage
	}
}

// install copies the file at src to dest with mode 0755, creating dest's
// parent directories. It writes a temporary file beside dest and renames it,
// so dest is either absent, the old file or the complete copy; running it
// again (a restarted init container) replaces dest.
func install(src, dest string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("cannot open %s: %w", src, err)
	}
	defer in.Close() //nolint:errcheck // read-only file; a close error changes nothing

	dir := filepath.Dir(dest)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create directory %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(dest)+".*")
	if err != nil {
		return fmt.Errorf("cannot create a file in %s: %w", dir, err)
	}
	if err := copyInto(tmp, in); err != nil {
		os.Remove(tmp.Name()) //nolint:errcheck // best effort; the copy error is what matters
		return fmt.Errorf("cannot copy %s to %s: %w", src, dest, err)
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		os.Remove(tmp.Name()) //nolint:errcheck // best effort; the rename error is what matters
		return fmt.Errorf("cannot move the copy to %s: %w", dest, err)
	}
	return nil
}

// copyInto fills f from r, makes it executable, syncs and closes it.
func copyInto(f *os.File, r io.Reader) error {
	if _, err := io.Copy(f, r); err != nil {
		f.Close() //nolint:errcheck // the copy error is what matters
		return err
	}
	if err := f.Chmod(0o755); err != nil {
		f.Close() //nolint:errcheck // the chmod error is what matters
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close() //nolint:errcheck // the sync error is what matters
		return err
	}
	return f.Close()
}
