// Command localcp is test tooling: it starts and stops a local control plane
// (etcd, kube-apiserver, controller manager, scheduler, kwok, Karpenter with
// its kwok provider and Crossplane core) on 127.0.0.1 for the end-to-end suite
// and the demo.
//
//	localcp up --dir DIR     start it; prints the kubeconfig export
//	localcp down --dir DIR   stop exactly the processes up started
//	localcp env --dir DIR    print shell exports for a running one
//	localcp status --dir DIR list its processes, readiness times and memory
//
// Binaries come from hack/tool.sh (built on first use).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/burstpool/burstpool/test/harness/gomod"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

const usage = `usage:
  localcp up   --dir DIR [--repo PATH] [--no-karpenter] [--no-crossplane]
               [--forward PORT]... [--instance-types FILE] [--crossplane-env KEY=VALUE]...
  localcp down   --dir DIR
  localcp env    --dir DIR
  localcp status --dir DIR
`

func main() {
	if len(os.Args) > 1 && os.Args[1] == localcp.RelayCommand {
		os.Exit(localcp.RelayMain(os.Args[2:]))
	}
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	cmd, args := os.Args[1], os.Args[2:]
	var err error
	run, ok := dirCommands[cmd]
	switch {
	case ok:
		err = runDir(cmd, args, run)
	case cmd == "up":
		err = up(args)
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "localcp %s: %v\n", cmd, err)
		os.Exit(1)
	}
}

// dirCommands are the subcommands whose only flag is --dir, the folder given
// to up.
var dirCommands = map[string]func(dir string) error{
	"down":   localcp.Down,
	"env":    loaded(func(c *localcp.Cluster) error { printEnv(c); return nil }),
	"status": loaded(status),
}

// runDir parses the --dir flag of cmd and runs it on that folder.
func runDir(cmd string, args []string, run func(dir string) error) error {
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	dir := fs.String("dir", "", "folder given to up (required)")
	_ = fs.Parse(args)
	if *dir == "" {
		return errors.New("--dir is required")
	}
	return run(*dir)
}

// loaded makes a subcommand of the control plane in a folder from one of a
// loaded control plane.
func loaded(run func(*localcp.Cluster) error) func(dir string) error {
	return func(dir string) error {
		c, err := localcp.Load(dir)
		if err != nil {
			return err
		}
		return run(c)
	}
}

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func up(args []string) error {
	fs := flag.NewFlagSet("up", flag.ExitOnError)
	dir := fs.String("dir", "", "folder for state, logs, data and the kubeconfig (required)")
	repo := fs.String("repo", "", "burstpool repository whose hack/tool.sh provides the binaries (default: found from the working directory)")
	noKarpenter := fs.Bool("no-karpenter", false, "do not start Karpenter")
	noCrossplane := fs.Bool("no-crossplane", false, "do not start Crossplane core")
	types := fs.String("instance-types", "", "Karpenter kwok instance types file (INSTANCE_TYPES_FILE_PATH)")
	timeout := fs.Duration("timeout", localcp.DefaultReadyTimeout, "wait at most this long for each component")
	var forward, xpEnv listFlag
	fs.Var(&forward, "forward", "host port Crossplane core reaches inside its network namespace (repeatable)")
	fs.Var(&xpEnv, "crossplane-env", "KEY=VALUE added to Crossplane core's environment (repeatable)")
	_ = fs.Parse(args)
	if *dir == "" {
		return errors.New("--dir is required")
	}
	root, err := repoRoot(*repo)
	if err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	bins, err := localcp.ToolBinaries(ctx, root)
	if err != nil {
		return err
	}
	cfg := localcp.Config{
		Dir:               *dir,
		Binaries:          bins,
		SkipKarpenter:     *noKarpenter,
		SkipCrossplane:    *noCrossplane,
		InstanceTypesFile: *types,
		CrossplaneEnv:     xpEnv,
		Timeout:           *timeout,
	}
	for _, f := range forward {
		p, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("--forward %q is not a port", f)
		}
		cfg.ForwardPorts = append(cfg.ForwardPorts, p)
	}
	start := time.Now()
	c, err := localcp.Up(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "control plane up in %s; logs in %s\n", time.Since(start).Round(100*time.Millisecond), filepath.Join(c.Dir, "logs"))
	printEnv(c)
	return nil
}

// status lists the processes of c, their readiness times, memory and CPU
// time.
func status(c *localcp.Cluster) error {
	running := map[int]bool{}
	for _, p := range c.Running() {
		running[p.PID] = true
	}
	fmt.Printf("%-26s %-8s %-8s %s\n", "PROCESS", "PID", "STATE", "READY AFTER")
	for _, p := range c.Processes {
		st := "exited"
		if running[p.PID] {
			st = "running"
		}
		ready := "-"
		if d, ok := c.ReadyAfter[p.Name]; ok {
			ready = d.String()
		}
		fmt.Printf("%-26s %-8d %-8s %s\n", p.Name, p.PID, st, ready)
	}
	fmt.Printf("\n%-26s %-8s %-12s %s\n", "COMPONENT", "PID", "RSS", "CPU")
	var total int64
	var cpu time.Duration
	for _, u := range c.Usage() {
		fmt.Printf("%-26s %-8d %-12s %s\n", u.Name, u.PID, fmt.Sprintf("%.1f MiB", float64(u.RSSKiB)/1024), u.CPU)
		total += u.RSSKiB
		cpu += u.CPU
	}
	fmt.Printf("%-26s %-8s %-12s %s\n", "total", "", fmt.Sprintf("%.1f MiB", float64(total)/1024), cpu)
	return nil
}

// printEnv prints shell exports: KUBECONFIG and one LOCALCP_PORT_<NAME> per port.
func printEnv(c *localcp.Cluster) {
	fmt.Printf("export KUBECONFIG=%s\n", c.Kubeconfig)
	fmt.Printf("export LOCALCP_DIR=%s\n", c.Dir)
	names := make([]string, 0, len(c.Ports))
	for n := range c.Ports {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Printf("export LOCALCP_PORT_%s=%d\n", strings.ToUpper(strings.ReplaceAll(n, "-", "_")), c.Ports[n])
	}
}

// repoRoot returns dir, or the checkout that holds the working directory.
func repoRoot(dir string) (string, error) {
	if dir != "" {
		return filepath.Abs(dir)
	}
	return gomod.Root()
}
