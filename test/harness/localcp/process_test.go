package localcp

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestStopOnlyWhatWasStarted checks that Start records the process it
// started with its log, that Stop never signals a process whose PID is
// recorded but whose start time differs (a reused PID), and that it ends the
// process group it did start.
func TestStopOnlyWhatWasStarted(t *testing.T) {
	mine, err := Start(t.TempDir(), "sleep", false, nil, "sleep", "60")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-mine.PID, syscall.SIGKILL) })
	if want := "localcp: starting sleep 60"; mine.Tail(1) != want {
		t.Errorf("last line of the log: got %q, want %q", mine.Tail(1), want)
	}

	stranger := Process{Name: "stranger", PID: mine.PID, StartTicks: mine.StartTicks + 1}
	if stranger.alive() {
		t.Fatal("a process with another start time counts as the recorded one")
	}
	if err := stranger.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if !mine.alive() {
		t.Fatal("Stop signalled a process it did not start")
	}

	if err := mine.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if mine.alive() {
		t.Error("the started process is still alive after Stop")
	}
}

func TestRSS(t *testing.T) {
	kib, err := RSSKiB(os.Getpid())
	if err != nil || kib <= 0 {
		t.Errorf("RSSKiB(self) = %d, %v; want a positive size", kib, err)
	}
}

func TestCPUTime(t *testing.T) {
	before, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatalf("CPUTime(self): %v", err)
	}
	// Spin until the kernel has charged this process at least two more
	// ticks; a CPUTime that does not grow never ends the loop, so bound it.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		now, err := CPUTime(os.Getpid())
		if err != nil {
			t.Fatalf("CPUTime(self): %v", err)
		}
		if now >= before+20*time.Millisecond {
			return
		}
	}
	t.Errorf("CPUTime(self) stayed at %s through 10 s of spinning", before)
}
