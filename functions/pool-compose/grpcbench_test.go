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
	"github.com/burstpool/burstpool/test/harness/pbstruct"
)

// TestGRPCBench runs the pool-compose binary over gRPC on loopback
// (insecure, as crossplane render does) twice, warm (with its decision
// cache, which answers every call after the first: Crossplane polling an
// unchanged pool) and cold (without: every call decided, as when the
// request changed), beside three floors (test/cmd/grpcfloor): echo, which
// answers each request with its desired state unchanged; same-bytes,
// which answers with the very response pool-compose gave, read at start
// and encoded on every call, the floor of a call that decides; and
// encoded, which sends that response's bytes as they are, the floor of a
// call the decision cache answers (which sends the encoding it kept). The
// five are called in turn, one call each per round, with the client
// Crossplane uses (default options: it accepts responses up to 4 MiB), and
// each pool shape is timed for BURSTPOOL_BENCH_GRPC_SECONDS (default 8)
// seconds. It prints p50 and p99 latency, server CPU per call (from
// /proc/PID/stat), request and response bytes, and pool-compose's ratios to
// the floors: warm to encoded and to same-bytes, cold to same-bytes. make
// bench-grpc runs it; it runs only with BURSTPOOL_BENCH_GRPC=1, as it takes
// minutes.
//
// On the shapes of goTemplatingShapes a sixth server takes its turn in each
// round: function-go-templating v0.12.2, the peer, given the same request
// with the template of testdata/gotemplating/input.yaml as its input (which
// renders the same composed objects as pool-compose, by name, and does
// less: its comment says what). Its binary is BURSTPOOL_GO_TEMPLATING,
// which make bench-grpc builds with hack/tool.sh; without it the test
// fails. The table adds the peer's CPU per call and its ratios to
// pool-compose's, cold and warm.
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
	peerBin := os.Getenv("BURSTPOOL_GO_TEMPLATING")
	if peerBin == "" {
		t.Fatal("set BURSTPOOL_GO_TEMPLATING to function-go-templating v0.12.2's binary: make bench-grpc builds it (hack/tool.sh function-go-templating)")
	}
	dir := t.TempDir()
	build(t, filepath.Join(dir, "pool-compose"), ".")
	build(t, filepath.Join(dir, "grpcfloor"), "../../test/cmd/grpcfloor")
	peerInput := pbstruct.FromYAML(t, string(mustRead(t, goTemplatingInput)))

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

	fn := serve(t, dir, filepath.Join(dir, "pool-compose"), "--insecure", "--metrics-address=")
	cold := serve(t, dir, filepath.Join(dir, "pool-compose"), "--insecure", "--metrics-address=", "--decision-cache-mib=0")
	// The peer's receive limit is raised from its 4 MiB default to
	// pool-compose's, so that a request pool-compose serves is not refused
	// for its size alone.
	peer := serve(t, dir, peerBin, "--insecure", fmt.Sprintf("--max-recv-message-size=%d", defaultMaxRecvMiB))
	peerReqs := make([]*fnv1.RunFunctionRequest, len(shapes))
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
		if !slices.Contains(goTemplatingShapes, shapes[i].name) {
			continue
		}
		// The peer composes the same objects, by name, from the same
		// request, its template for input.
		peerReqs[i] = proto.CloneOf(req)
		peerReqs[i].Input = peerInput
		prsp, err := peer.call(t.Context(), peerReqs[i])
		if err != nil {
			t.Fatalf("%s: function-go-templating over gRPC: %v", shapes[i].name, err)
		}
		if f := fatal(prsp); f != "" {
			t.Fatalf("%s: function-go-templating: Fatal %s", shapes[i].name, f)
		}
		if diff := cmp.Diff(desiredNames(rsp), desiredNames(prsp)); diff != "" {
			t.Fatalf("%s: function-go-templating composes other objects than pool-compose (-pool-compose +go-templating):\n%s", shapes[i].name, diff)
		}
	}
	same := serve(t, dir, filepath.Join(dir, "grpcfloor"), "--mode=fixed", "--responses="+rspDir)
	encoded := serve(t, dir, filepath.Join(dir, "grpcfloor"), "--mode=encoded", "--responses="+rspDir)
	echo := serve(t, dir, filepath.Join(dir, "grpcfloor"), "--mode=echo")
	servers := []*server{fn, cold, same, encoded, echo, peer}
	const peerAt = 5

	var out strings.Builder
	fmt.Fprintf(&out, "gRPC on loopback, insecure; %s per shape, servers called in turn.\n\n", budget)
	fmt.Fprintln(&out, "| N×M | request | response | p50 warm / cold / same-bytes / encoded / echo | p99 warm / cold / same-bytes / encoded / echo | CPU/call warm / cold / same-bytes / encoded / echo | CPU warm ÷ encoded | CPU warm ÷ same | CPU cold ÷ same | p50 cold ÷ same | go-templating response | go-templating p50 | go-templating CPU/call | go-templating ÷ cold | go-templating ÷ warm | calls |")
	fmt.Fprintln(&out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, req := range reqs {
		// Each server's request: the peer's carries its template.
		in := []*fnv1.RunFunctionRequest{req, req, req, req, req, peerReqs[i]}
		lat := make([][]time.Duration, len(servers))
		cpu0 := make([]time.Duration, len(servers))
		for j, s := range servers {
			cpu0[j] = s.cpu(t)
		}
		rspBytes := make([]int, len(servers))
		start := time.Now()
		for r := 0; r < 10 || time.Since(start) < budget; r++ {
			for k := range servers {
				j := (r + k) % len(servers)
				if in[j] == nil {
					continue
				}
				t0 := time.Now()
				rsp, err := servers[j].call(t.Context(), in[j])
				d := time.Since(t0)
				if err != nil {
					t.Fatalf("%s: %s: %v", shapes[i].name, servers[j].name, err)
				}
				if rspBytes[j] == 0 {
					rspBytes[j] = proto.Size(rsp)
				}
				lat[j] = append(lat[j], d)
			}
		}
		calls := len(lat[0])
		cpu := make([]time.Duration, len(servers))
		p50, p99 := make([]time.Duration, len(servers)), make([]time.Duration, len(servers))
		for j, s := range servers {
			if len(lat[j]) == 0 {
				continue
			}
			cpu[j] = (s.cpu(t) - cpu0[j]) / time.Duration(len(lat[j]))
			slices.Sort(lat[j])
			p50[j], p99[j] = lat[j][len(lat[j])/2], lat[j][len(lat[j])*99/100]
		}
		peerCols := "— | — | — | — | —"
		if in[peerAt] != nil {
			peerCols = fmt.Sprintf("%s | %s | %s | %.1f× | %.1f×", kib(rspBytes[peerAt]), ms(p50[peerAt]), ms(cpu[peerAt]), ratio(cpu[peerAt], cpu[1]), ratio(cpu[peerAt], cpu[0]))
		}
		fmt.Fprintf(&out, "| %s | %s | %s | %s / %s / %s / %s / %s | %s / %s / %s / %s / %s | %s / %s / %s / %s / %s | %.2f× | %.2f× | %.2f× | %.2f× | %s | %d |\n",
			shapes[i].name, kib(proto.Size(req)), kib(rspBytes[0]),
			ms(p50[0]), ms(p50[1]), ms(p50[2]), ms(p50[3]), ms(p50[4]), ms(p99[0]), ms(p99[1]), ms(p99[2]), ms(p99[3]), ms(p99[4]),
			ms(cpu[0]), ms(cpu[1]), ms(cpu[2]), ms(cpu[3]), ms(cpu[4]),
			ratio(cpu[0], cpu[3]), ratio(cpu[0], cpu[2]), ratio(cpu[1], cpu[2]), ratio(p50[1], p50[2]), peerCols, calls)
	}
	fmt.Print("\n" + out.String())
	if p := os.Getenv("BURSTPOOL_BENCH_GRPC_OUT"); p != "" {
		if err := os.WriteFile(p, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// goTemplatingShapes are the shapes on which the peer is measured: those
// of the acceptance item it is measured for. On the realistic row the
// peer is not run.
var goTemplatingShapes = []string{"1x1", "10x10", "100x20", "1000x20"}

// goTemplatingInput is function-go-templating's input for the benchmark.
const goTemplatingInput = "testdata/gotemplating/input.yaml"

// mustRead reads the file at path.
func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
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

// serve starts the binary at path bin with args and an --address on a free
// loopback port, logging into dir, and waits until it answers. It is
// stopped when t ends.
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
	name := filepath.Base(bin)
	log, err := os.CreateTemp(dir, name+"-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append(args, "--address="+addr)...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start %s: %v", name, err)
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
	s := &server{name: name + " " + strings.Join(args, " "), pid: cmd.Process.Pid, conn: conn, fn: fnv1.NewFunctionRunnerServiceClient(conn)}
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
