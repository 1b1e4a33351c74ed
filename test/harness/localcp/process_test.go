package localcp

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestStopOnlyWhatWasStarted checks that stop never signals a process whose
// PID is recorded but whose start time differs (a reused PID), and that it
// ends the process group it did start.
func TestStopOnlyWhatWasStarted(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var r reaper
	r.watch(cmd)
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })

	ticks, err := startTicks(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	stranger := Process{Name: "stranger", PID: cmd.Process.Pid, StartTicks: ticks + 1}
	if stranger.alive() {
		t.Fatal("a process with another start time counts as the recorded one")
	}
	if err := stranger.stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if !(Process{PID: cmd.Process.Pid, StartTicks: ticks}).alive() {
		t.Fatal("stop signalled a process it did not start")
	}

	mine := Process{Name: "sleep", PID: cmd.Process.Pid, StartTicks: ticks}
	if err := mine.stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if mine.alive() {
		t.Error("the started process is still alive after stop")
	}
}

func TestRSS(t *testing.T) {
	kib, err := RSSKiB(os.Getpid())
	if err != nil || kib <= 0 {
		t.Errorf("RSSKiB(self) = %d, %v; want a positive size", kib, err)
	}
}
