package devplane

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/burstpool/burstpool/test/harness/localcp"
)

// Proc is a runtime process the stack started, in its own process group,
// logging to a file.
type Proc struct {
	Name string
	PID  int
	Log  string

	path string
	args []string
	env  []string
	done chan struct{}
}

// Start starts path with args, env added to the environment, output to
// logDir/name.log. With stopWithParent the process gets SIGTERM when the
// caller exits.
func Start(logDir, name string, stopWithParent bool, env []string, path string, args ...string) (*Proc, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	// The child holds its own copy of the descriptor.
	defer func() { _ = f.Close() }()
	cmd := exec.Command(path, args...) //nolint:gosec // binaries the stack built
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if stopWithParent {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", name, err)
	}
	p := &Proc{Name: name, PID: cmd.Process.Pid, Log: logPath, path: path, args: args, env: env, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *Proc) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = syscall.Kill(-p.PID, syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(5 * time.Second):
		return errors.New(p.Name + " did not exit")
	}
}

// Tail returns the last n lines of the process's log.
func (p *Proc) Tail(n int) string {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return ""
	}
	return localcp.TailLines(string(b), n)
}
