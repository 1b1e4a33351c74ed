// Command benchburst measures how fast a burst of executors runs (make
// bench-burst): on the local control plane with burstpool installed, and a
// simulated cloud in which a new node takes a launch time before it is Ready
// and a pod waits for its image to be pulled onto its node (test/burst), it
// bursts executors onto a cold Karpenter NodePool and onto pools with and
// without warm slots, and prints the time from each executor pod's creation
// to Running, and until all run, with ratios to the cold case.
//
// What is modelled: node launch (registration to Ready) as one fixed time;
// image pulls from image size and a fixed throughput, one pull per image and
// node shared by every pod that needs it, different images in parallel.
// What is not: the cloud's API latency and capacity errors, registry
// throttling, lazy image loading, container start-up and readiness probes,
// and the network.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/burstpool/burstpool/test/burst"
	"github.com/burstpool/burstpool/test/harness/devplane"
	"github.com/burstpool/burstpool/test/harness/gomod"
	"github.com/burstpool/burstpool/test/harness/localcp"
)

func main() {
	// The control plane's relays run this binary in their network namespace.
	if len(os.Args) > 1 && os.Args[1] == localcp.RelayCommand {
		os.Exit(localcp.RelayMain(os.Args[2:]))
	}
	dir := flag.String("dir", "_output/bench-burst", "folder of the benchmark's control plane")
	executors := flag.Int("executors", 6, "executors per burst (and warm slots of the warm pools)")
	// The defaults and their sources: package burst.
	launch := flag.Duration("launch", burst.DefaultLaunch, "modelled node launch: registration to Ready")
	throughput := flag.Int64("pull-mib-per-s", burst.DefaultPullMiBPerSecond, "modelled image pull throughput, MiB/s")
	imageMiB := flag.Int64("executor-image-mib", burst.DefaultExecutorImageMiB, "modelled size of the executor image, MiB (other images: 50 MiB)")
	buffer := flag.Bool("capacity-buffer", false, "run Karpenter with its CapacityBuffer gate on: warm slots are a CapacityBuffer, and new executors wait at the executor gate until Karpenter has seen the buffer lowered")
	flag.Parse()
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fail(err)
	}
	cloud := burst.Cloud{
		Launch:           *launch,
		Throughput:       *throughput << 20,
		ImageSizes:       map[string]int64{executorImage: *imageMiB << 20},
		DefaultImageSize: burst.DefaultOtherImageMiB << 20,
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, abs, cloud, *executors, *buffer); err != nil {
		fail(err)
	}
}

func run(ctx context.Context, dir string, cloud burst.Cloud, n int, buffer bool) error {
	root, err := gomod.Root()
	if err != nil {
		return err
	}
	kwok, err := gomod.Dir(ctx, burst.KwokModule, burst.KwokVersion)
	if err != nil {
		return err
	}
	conf, err := burst.KwokConfig(kwok)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	cfg := devplane.Config{Root: root, Dir: dir, Say: say, KwokConfig: conf, StopWithParent: true}
	if buffer {
		cfg.KarpenterEnv = []string{devplane.KarpenterGatesWithBuffer}
	}
	s, err := devplane.Up(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		if err := s.Down(); err != nil {
			say("stopping the control plane: %v", err)
		}
	}()
	b, err := newBench(ctx, s, root, cloud, buffer)
	if err != nil {
		return err
	}
	say("simulated cloud: %s", cloud)
	scenarios := []scenario{
		{name: "no pool (cold Karpenter NodePool)", executors: n},
		{name: "pool, no warm slots", pool: true, executors: n},
		{name: "pool, warm slots and images", pool: true, warm: n, executors: n},
		{name: "pool, burst 2x the warm slots", pool: true, warm: n, executors: 2 * n},
	}
	if buffer {
		// The pool without warm slots is the same with or without a
		// buffer; the warm ones hold their slots in a CapacityBuffer.
		scenarios = []scenario{
			scenarios[0],
			{name: "pool, CapacityBuffer warm slots and images", pool: true, warm: n, executors: n},
			{name: "pool, CapacityBuffer, burst 2x the warm slots", pool: true, warm: n, executors: 2 * n},
		}
	}
	var results []burst.Result
	for i, sc := range scenarios {
		fmt.Printf("\n==> %s: %d executors, %d warm slots\n", sc.name, sc.executors, sc.warm)
		r, err := b.run(ctx, fmt.Sprintf("bench-%d", i), sc)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		say("  p50 %s, p90 %s, all %d Running after %s", burst.Percentile(r.ToRunning, 50).Round(100*time.Millisecond),
			burst.Percentile(r.ToRunning, 90).Round(100*time.Millisecond), sc.executors, r.AllRunning.Round(100*time.Millisecond))
		results = append(results, r)
	}
	fmt.Println()
	return burst.Table(os.Stdout, cloud, results)
}

func say(format string, args ...any) {
	fmt.Printf("%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchburst:", err)
	os.Exit(1)
}
