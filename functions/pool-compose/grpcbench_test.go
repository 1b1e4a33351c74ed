package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/burstpool/burstpool/test/harness/localcp"
)

// TestGRPCBench runs the pool-compose binary over gRPC on loopback
// (insecure, as crossplane render does) twice, warm (with its decision
// cache, which answers every call after the first: Crossplane polling an
// unchanged pool) and cold (without: every call decided, as when the
// request changed), beside two floors (test/cmd/grpcfloor): echo, which
// answers each request with its desired state unchanged, and same-bytes,
// which answers with the very response pool-compose gave, read at start.
// The four are called in turn, one call each per round, with the client
// Crossplane uses (default options: it accepts responses up to 4 MiB), and
// each pool shape is timed for BURSTPOOL_BENCH_GRPC_SECONDS (default 8)
// seconds. It prints p50 and p99 latency, server CPU per call (from
// /proc/PID/stat), request and response bytes, and pool-compose's ratios to
// the same-bytes floor. make bench-grpc runs it; it runs only with
// BURSTPOOL_BENCH_GRPC=1, as it takes minutes.
func TestGRPCBench(t *testing.T) {
	if os.Getenv("BURSTPOOL_BENCH_GRPC") != "1" {
		t.Skip("set BURSTPOOL_BENCH_GRPC=1 (make bench-grpc) to run the gRPC benchmark")
	}
	budget := 8 * time.Second
	if v := os.Getenv("BURSTPOOL_BENCH_GRPC_SECONDS"); v != "" {
		s, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("BURSTPOOL_BENCH_GRPC_SECONDS=%q: %v", v, err)
		}
		budget = time.Duration(s) * time.Second
	}
	dir := t.TempDir()
	build(t, filepath.Join(dir, "pool-compose"), ".")
	build(t, filepath.Join(dir, "grpcfloor"), "../../test/cmd/grpcfloor")

	type shape struct {
		name      string
		n, images int
		realistic bool
	}
	shapes := []shape{{"1x1", 1, 1, false}, {"10x10", 10, 10, false}, {"100x20", 100, 20, false}, {"1000x20", 1000, 20, false}, {"1000x20-8KB", 1000, 20, true}}
	reqs := make([]*fnv1.RunFunctionRequest, len(shapes))
	for i, s := range shapes {
		reqs[i] = benchRequest(t, s.n, s.images, s.realistic)
		reqs[i].Meta.Tag = s.name
	}

	fn := serve(t, dir, "pool-compose", "--insecure", "--metrics-address=")
	cold := serve(t, dir, "pool-compose", "--insecure", "--metrics-address=", "--decision-cache-mib=0")
	rspDir := filepath.Join(dir, "responses")
	if err := os.Mkdir(rspDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, req := range reqs {
		rsp, err := fn.call(t.Context(), req)
		if err != nil {
			t.Fatalf("%s: RunFunction over gRPC: %v", shapes[i].name, err)
		}
		if f := fatal(rsp); f != "" {
			t.Fatalf("%s: Fatal %s", shapes[i].name, f)
		}
		// The cached answer is the decided one.
		again, err := fn.call(t.Context(), req)
		if err != nil {
			t.Fatalf("%s: RunFunction over gRPC: %v", shapes[i].name, err)
		}
		decided, err := cold.call(t.Context(), req)
		if err != nil {
			t.Fatalf("%s: RunFunction over gRPC without the decision cache: %v", shapes[i].name, err)
		}
		if diff := cmp.Diff(decided, again, protocmp.Transform()); diff != "" {
			t.Fatalf("%s: the cached response differs from the decided one (-decided +cached):\n%s", shapes[i].name, diff)
		}
		b, err := proto.Marshal(rsp)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(rspDir, shapes[i].name+".pb"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	same := serve(t, dir, "grpcfloor", "--mode=fixed", "--responses="+rspDir)
	echo := serve(t, dir, "grpcfloor", "--mode=echo")
	servers := []*server{fn, cold, same, echo}

	var out strings.Builder
	fmt.Fprintf(&out, "gRPC on loopback, insecure; %s per shape, servers called in turn.\n\n", budget)
	fmt.Fprintln(&out, "| N×M | request | response | p50 warm / cold / same-bytes / echo | p99 warm / cold / same-bytes / echo | CPU/call warm / cold / same-bytes / echo | CPU warm ÷ same | CPU cold ÷ same | p50 cold ÷ same | calls |")
	fmt.Fprintln(&out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, req := range reqs {
		lat := make([][]time.Duration, len(servers))
		cpu0 := make([]time.Duration, len(servers))
		for j, s := range servers {
			cpu0[j] = s.cpu(t)
		}
		var rspBytes int
		start := time.Now()
		for r := 0; r < 10 || time.Since(start) < budget; r++ {
			for k := range servers {
				j := (r + k) % len(servers)
				t0 := time.Now()
				rsp, err := servers[j].call(t.Context(), req)
				d := time.Since(t0)
				if err != nil {
					t.Fatalf("%s: %s: %v", shapes[i].name, servers[j].name, err)
				}
				if j == 0 && rspBytes == 0 {
					rspBytes = proto.Size(rsp)
				}
				lat[j] = append(lat[j], d)
			}
		}
		calls := len(lat[0])
		cpu := make([]time.Duration, len(servers))
		for j, s := range servers {
			cpu[j] = (s.cpu(t) - cpu0[j]) / time.Duration(calls)
		}
		p50, p99 := make([]time.Duration, len(servers)), make([]time.Duration, len(servers))
		for j := range servers {
			slices.Sort(lat[j])
			p50[j], p99[j] = lat[j][len(lat[j])/2], lat[j][len(lat[j])*99/100]
		}
		fmt.Fprintf(&out, "| %s | %s | %s | %s / %s / %s / %s | %s / %s / %s / %s | %s / %s / %s / %s | %.2f× | %.2f× | %.2f× | %d |\n",
			shapes[i].name, kib(proto.Size(req)), kib(rspBytes),
			ms(p50[0]), ms(p50[1]), ms(p50[2]), ms(p50[3]), ms(p99[0]), ms(p99[1]), ms(p99[2]), ms(p99[3]),
			ms(cpu[0]), ms(cpu[1]), ms(cpu[2]), ms(cpu[3]),
			ratio(cpu[0], cpu[2]), ratio(cpu[1], cpu[2]), ratio(p50[1], p50[2]), calls)
	}
	fmt.Print("\n" + out.String())
	if p := os.Getenv("BURSTPOOL_BENCH_GRPC_OUT"); p != "" {
		if err := os.WriteFile(p, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

func kib(n int) string { return fmt.Sprintf("%.1f KiB", float64(n)/1024) }

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

// build builds the main package pkg into out.
func build(t *testing.T, out, pkg string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

// server is a function binary serving on loopback.
type server struct {
	name string
	pid  int
	conn *grpc.ClientConn
	fn   fnv1.FunctionRunnerServiceClient
}

// serve starts the binary bin of dir with args and an --address on a free
// loopback port, and waits until it answers. It is stopped when t ends.
func serve(t *testing.T, dir, bin string, args ...string) *server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	log, err := os.CreateTemp(dir, bin+"-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, bin), append(args, "--address="+addr)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = log.Close()
	})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	s := &server{name: bin + " " + strings.Join(args, " "), pid: cmd.Process.Pid, conn: conn, fn: fnv1.NewFunctionRunnerServiceClient(conn)}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		_, err := s.fn.RunFunction(ctx, &fnv1.RunFunctionRequest{Meta: &fnv1.RequestMeta{Tag: "1x1"}}, grpc.WaitForReady(true))
		cancel()
		if err == nil || !strings.Contains(err.Error(), "DeadlineExceeded") && !strings.Contains(err.Error(), "Unavailable") {
			return s
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("%s does not answer on %s: %v\n%s", s.name, addr, err, b)
		}
	}
}

// call runs req on s.
func (s *server) call(ctx context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return s.fn.RunFunction(ctx, req)
}

// cpu is the CPU time s's process has used, user and system.
func (s *server) cpu(t *testing.T) time.Duration {
	t.Helper()
	d, err := localcp.CPUTime(s.pid)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
