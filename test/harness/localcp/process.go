package localcp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A Process is one started component as state.json records it. PID leads
// its own process group; StartTicks (field 22 of /proc/PID/stat) tells the
// process apart from a later one that reuses the PID.
type Process struct {
	Name       string `json:"name"`
	PID        int    `json:"pid"`
	StartTicks uint64 `json:"startTicks"`
	Log        string `json:"log"`
	// NetNS is set when the process runs in its own loopback-only network
	// namespace behind relays; its first child is then the component itself.
	NetNS bool `json:"netns,omitempty"`
}

// spec describes a process to start.
type spec struct {
	name  string
	path  string
	args  []string
	env   []string // added to the environment of the caller
	netns bool     // start in a new network namespace
}

// reaper waits for the children this process started, so that they do not
// linger as zombies while Down polls for them to exit.
type reaper struct {
	mu   sync.Mutex
	done map[int]chan struct{}
	// withParent makes children get SIGTERM when this process ends.
	withParent bool
}

// spawner runs functions on one OS thread that lives as long as the process.
// Linux sends a child's parent-death signal when the thread that forked it
// ends, not the process, so children that must stop with this process are
// forked from this thread.
var spawner struct {
	once sync.Once
	ch   chan func()
}

func onSpawnerThread(f func()) {
	spawner.once.Do(func() {
		spawner.ch = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: the thread must outlive every child
			for f := range spawner.ch {
				f()
			}
		}()
	})
	done := make(chan struct{})
	spawner.ch <- func() { f(); close(done) }
	<-done
}

func (r *reaper) watch(cmd *exec.Cmd) {
	r.mu.Lock()
	if r.done == nil {
		r.done = map[int]chan struct{}{}
	}
	ch := make(chan struct{})
	r.done[cmd.Process.Pid] = ch
	r.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		close(ch)
	}()
}

// reaped waits up to d for the process pid this reaper started to be
// reaped: every thread of it gone, so whatever it held (a listening port)
// is free. A process it did not start counts as reaped.
func (r *reaper) reaped(pid int, d time.Duration) bool {
	r.mu.Lock()
	ch := r.done[pid]
	r.mu.Unlock()
	if ch == nil {
		return true
	}
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// start launches s with its output appended to logDir/<name>.log.
func (r *reaper) start(s spec, logDir string) (Process, error) {
	logPath := filepath.Join(logDir, s.name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644) //nolint:gosec // logs are meant to be read
	if err != nil {
		return Process{}, fmt.Errorf("cannot open the log of %s: %w", s.name, err)
	}
	defer f.Close()                        //nolint:errcheck // the child holds its own descriptor
	cmd := exec.Command(s.path, s.args...) //nolint:gosec // binaries come from the caller's configuration
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Env = append(os.Environ(), s.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if s.netns {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNET
	}
	_, _ = fmt.Fprintf(f, "localcp: starting %s %s\n", s.path, strings.Join(s.args, " "))
	start := cmd.Start
	if r.withParent {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
		start = func() (err error) {
			onSpawnerThread(func() { err = cmd.Start() })
			return err
		}
	}
	if err := start(); err != nil {
		if s.netns && errors.Is(err, syscall.EPERM) {
			return Process{}, fmt.Errorf("cannot start %s in its own network namespace (needs root or CAP_SYS_ADMIN): %w", s.name, err)
		}
		return Process{}, fmt.Errorf("cannot start %s (%s): %w", s.name, s.path, err)
	}
	r.watch(cmd)
	p := Process{Name: s.name, PID: cmd.Process.Pid, Log: logPath, NetNS: s.netns}
	p.StartTicks, _ = startTicks(p.PID)
	return p, nil
}

// Start starts path with args as a process group of its own, env added to
// the environment, its output appended to logDir/name.log. With
// stopWithParent it gets SIGTERM when this process ends. Stop ends it.
func Start(logDir, name string, stopWithParent bool, env []string, path string, args ...string) (Process, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return Process{}, err
	}
	r := reaper{withParent: stopWithParent}
	return r.start(spec{name: name, path: path, args: args, env: env}, logDir)
}

// statFields returns the fields of /proc/PID/stat after the command name.
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	// Fields from 3 (state) on; index 0 is field 3.
	return strings.Fields(string(b[i+1:])), nil
}

// CPUTime is the user and system CPU time process pid has used.
func CPUTime(pid int) (time.Duration, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	// utime and stime are fields 14 and 15, in ticks of USER_HZ, which is
	// 100 on Linux.
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}

func startTicks(pid int) (uint64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 20 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// alive reports whether p is still the process that was started and has not
// exited (a zombie counts as exited).
func (p Process) alive() bool {
	f, err := statFields(p.PID)
	if err != nil || len(f) < 20 || f[0] == "Z" {
		return false
	}
	t, err := strconv.ParseUint(f[19], 10, 64)
	return err == nil && t == p.StartTicks
}

// groupAlive reports whether any live, non-zombie process is in p's group.
func (p Process) groupAlive() bool {
	if p.alive() {
		return true
	}
	return len(groupMembers(p.PID)) > 0
}

// groupMembers lists live processes other than the leader whose process
// group is pgid. Linux does not reuse a PID while a group it names has
// members, so while this list is not empty the group is still the one that
// was started; the leader itself is checked by alive.
func groupMembers(pgid int) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == pgid {
			continue
		}
		f, err := statFields(pid)
		if err != nil || len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Stop ends p's process group: SIGTERM, then SIGKILL after grace. It only
// signals the group when its leader is still the process that was started,
// or when members of the group it led remain.
func (p Process) Stop(grace time.Duration) error {
	if p.PID <= 0 || (!p.alive() && len(groupMembers(p.PID)) == 0) {
		return nil
	}
	_ = syscall.Kill(-p.PID, syscall.SIGTERM)
	if waitGone(p, grace) {
		return nil
	}
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	if waitGone(p, 5*time.Second) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) is still running after SIGKILL", p.Name, p.PID)
}

func waitGone(p Process, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !p.groupAlive() {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return !p.groupAlive()
}

// children lists the direct children of pid.
func children(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, s := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(s); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// RSSKiB reads the resident memory (VmRSS) of process pid, in KiB.
func RSSKiB(pid int) (int64, error) { return StatusKiB(pid, "VmRSS") }

// StatusKiB reads a size field of /proc/PID/status (VmRSS, the resident
// memory; VmHWM, its peak) of process pid, in KiB.
func StatusKiB(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close() //nolint:errcheck // read-only
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// FindProcess returns the PID of the process whose command line holds
// every one of args, or zero when none does.
func FindProcess(args ...string) int {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		have := map[string]bool{}
		for _, a := range Cmdline(pid) {
			have[a] = true
		}
		all := true
		for _, a := range args {
			all = all && have[a]
		}
		if all {
			return pid
		}
	}
	return 0
}

// Cmdline returns the command line of process pid, nil when it cannot be
// read.
func Cmdline(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// Tail returns the last n lines of p's log.
func (p Process) Tail(n int) string { return tail(p.Log, n) }

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path) //nolint:gosec // a log this package wrote
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	return TailLines(string(b), n)
}

// TailLines returns the last n lines of s.
func TailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Alive reports whether p's process, or any process of its group, still
// runs.
func (p Process) Alive() bool { return p.groupAlive() }

// Kill ends p's process group with SIGKILL at once, as a lost node or the
// OOM killer would: the process cleans nothing up (a leader keeps its
// Lease until it expires).
func (p Process) Kill() error {
	if p.PID <= 0 || !p.groupAlive() {
		return nil
	}
	_ = syscall.Kill(-p.PID, syscall.SIGKILL)
	if waitGone(p, 5*time.Second) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) is still running after SIGKILL", p.Name, p.PID)
}
