package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, []byte("binary"), 0o600); err != nil {
		t.Fatal(err)
	}
	self := func() (string, error) { return src, nil }
	lost := func() (string, error) { return "", errors.New("no /proc") }

	type args struct {
		args       []string
		executable func() (string, error)
	}
	type want struct {
		code      int
		stdout    string
		stderrHas string
		installed string // path that must hold a copy of src afterwards
	}
	cases := map[string]struct {
		reason string
		args   args
		want   want
	}{
		"NoArgs": {
			reason: "Without even argv[0] there is nothing to do, so the helper exits 0.",
			args:   args{args: nil, executable: self},
			want:   want{code: exitOK},
		},
		"OtherName": {
			reason: "Under any other name than warm the binary is a no-op that ignores its arguments.",
			args:   args{args: []string{"/burstpool/noop", "install", "/x"}, executable: self},
			want:   want{code: exitOK},
		},
		"Noop": {
			reason: "warm noop exits 0 at once.",
			args:   args{args: []string{"/warm", "noop"}, executable: self},
			want:   want{code: exitOK},
		},
		"Help": {
			reason: "warm help prints usage on stdout and exits 0.",
			args:   args{args: []string{"warm", "help"}, executable: self},
			want:   want{code: exitOK, stdout: usage},
		},
		"NoCommand": {
			reason: "warm without a command is a usage error.",
			args:   args{args: []string{"warm"}, executable: self},
			want:   want{code: exitUsage, stderrHas: "usage:"},
		},
		"UnknownCommand": {
			reason: "An unknown command is a usage error that names it.",
			args:   args{args: []string{"warm", "pull"}, executable: self},
			want:   want{code: exitUsage, stderrHas: `unknown command "pull"`},
		},
		"InstallNoDest": {
			reason: "install needs a destination.",
			args:   args{args: []string{"warm", "install"}, executable: self},
			want:   want{code: exitUsage, stderrHas: "exactly one destination"},
		},
		"InstallTwoDests": {
			reason: "install takes exactly one destination.",
			args:   args{args: []string{"warm", "install", "/a", "/b"}, executable: self},
			want:   want{code: exitUsage, stderrHas: "exactly one destination"},
		},
		"InstallNoExecutable": {
			reason: "install fails when the running executable cannot be found.",
			args:   args{args: []string{"warm", "install", filepath.Join(dir, "never")}, executable: lost},
			want:   want{code: exitError, stderrHas: "cannot find own executable: no /proc"},
		},
		"Install": {
			reason: "install copies the executable, creating parent directories.",
			args:   args{args: []string{"warm", "install", filepath.Join(dir, "a", "b", "noop")}, executable: self},
			want: want{
				code:      exitOK,
				stdout:    "warm: installed " + filepath.Join(dir, "a", "b", "noop") + "\n",
				installed: filepath.Join(dir, "a", "b", "noop"),
			},
		},
		"PauseArgs": {
			reason: "pause takes no arguments.",
			args:   args{args: []string{"warm", "pause", "10s"}, executable: self},
			want:   want{code: exitUsage, stderrHas: "takes no arguments"},
		},
		"PauseDone": {
			reason: "pause returns 0 once its context is done (the signal arrived).",
			args:   args{args: []string{"warm", "pause"}, executable: self},
			want:   want{code: exitOK, stdout: "warm: paused until SIGTERM\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			var stdout, stderr bytes.Buffer
			code := run(ctx, tc.args.args, tc.args.executable, &stdout, &stderr)
			if diff := cmp.Diff(tc.want.code, code); diff != "" {
				t.Errorf("%s\nrun(...): -want code, +got code:\n%s\nstderr: %s", tc.reason, diff, stderr.String())
			}
			if diff := cmp.Diff(tc.want.stdout, stdout.String()); diff != "" {
				t.Errorf("%s\nrun(...): -want stdout, +got stdout:\n%s", tc.reason, diff)
			}
			if tc.want.stderrHas == "" && stderr.Len() > 0 {
				t.Errorf("%s\nrun(...): unexpected stderr: %s", tc.reason, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want.stderrHas) {
				t.Errorf("%s\nrun(...): stderr %q does not contain %q", tc.reason, stderr.String(), tc.want.stderrHas)
			}
			if tc.want.installed != "" {
				assertCopy(t, src, tc.want.installed)
			}
		})
	}
}

func TestInstallReplaces(t *testing.T) {
	dir := t.TempDir()
	src, dest := filepath.Join(dir, "src"), filepath.Join(dir, "noop")
	if err := os.WriteFile(src, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dest, []byte("old and longer"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := install(src, dest); err != nil {
		t.Fatalf("install(...): %v", err)
	}
	assertCopy(t, src, dest)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("install(...) left files behind: %v", entries)
	}
}

func TestInstallMissingSource(t *testing.T) {
	dir := t.TempDir()
	err := install(filepath.Join(dir, "missing"), filepath.Join(dir, "noop"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("install(missing, ...): want an error wrapping os.ErrNotExist, got %v", err)
	}
}

// TestBinary builds the real static binary and runs it the way a warmup pod
// does: install into a directory, run the copy as noop, pause until a signal.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	// go test puts its own toolchain first on PATH.
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test builds cmd/warm with the go command, which is not on PATH (%v): run it with go test", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "warm")
	build := exec.Command(gobin, "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	if runtime.GOOS == "linux" {
		assertStatic(t, bin)
	}

	noop := filepath.Join(dir, "emptydir", "burstpool", "noop")
	if code, out := exitCode(t, exec.Command(bin, "install", noop)); code != 0 {
		t.Fatalf("warm install: exit %d\n%s", code, out)
	}
	assertCopy(t, bin, noop)

	for _, c := range [][]string{{noop}, {noop, "pause"}, {bin, "noop"}} {
		start := time.Now()
		if code, out := exitCode(t, exec.Command(c[0], c[1:]...)); code != 0 {
			t.Errorf("%v: exit %d, want 0\n%s", c, code, out)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%v: took %s, want it to exit at once", c, d)
		}
	}

	if code, _ := exitCode(t, exec.Command(bin, "pull")); code != exitUsage {
		t.Errorf("warm pull: exit %d, want %d", code, exitUsage)
	}

	for name, sig := range map[string]syscall.Signal{"PauseSIGTERM": syscall.SIGTERM, "PauseSIGINT": syscall.SIGINT} {
		t.Run(name, func(t *testing.T) {
			assertPause(t, bin, sig)
		})
	}
}

// assertPause starts warm pause, checks that it keeps running, sends sig and
// checks that it exits 0 promptly.
func assertPause(t *testing.T, bin string, sig syscall.Signal) {
	t.Helper()
	cmd := exec.Command(bin, "pause")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	// The first line is printed once the signal handler is in place.
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill() //nolint:errcheck // cleanup after a failure already reported
		t.Fatalf("warm pause: reading stdout: %v", err)
	}
	if line != "warm: paused until SIGTERM\n" {
		t.Errorf("warm pause: first line %q", line)
	}
	go func() { done <- cmd.Wait() }()

	select {
	case err := <-done:
		t.Fatalf("warm pause: exited before a signal: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("warm pause after %v: %v, want exit 0", sig, err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill() //nolint:errcheck // cleanup after a failure already reported
		t.Fatalf("warm pause: still running 10s after %v", sig)
	}
}

// exitCode runs cmd and returns its exit code and combined output.
func exitCode(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	default:
		t.Fatalf("%v: %v", cmd.Args, err)
		return -1, ""
	}
}

// assertCopy checks that dest has src's content and mode 0755.
func assertCopy(t *testing.T, src, dest string) {
	t.Helper()
	want, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dest)
	if err != nil {
		t.Fatalf("reading the copy: %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s: content differs from %s (%d vs %d bytes)", dest, src, len(got), len(want))
	}
	fi, err := os.Stat(dest)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(os.FileMode(0o755), fi.Mode().Perm()); diff != "" {
		t.Errorf("%s: -want mode, +got mode:\n%s", dest, diff)
	}
}

// assertStatic checks that the ELF binary needs no dynamic loader or shared
// library, so it runs in any image.
func assertStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	defer f.Close() //nolint:errcheck // read-only
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s: has program header %v, want a static binary", bin, p.Type)
		}
	}
}
