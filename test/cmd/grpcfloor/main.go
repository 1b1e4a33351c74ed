// Command grpcfloor is test tooling: a composition function server that does as
// little as a function can, for the gRPC benchmark of pool-compose
// (functions/pool-compose, make bench-grpc) to compare with.
//
// Mode echo answers each request with its own desired state, unchanged.
// Mode fixed answers with a response read at start from DIR/TAG.pb (a
// binary RunFunctionResponse), TAG being the request's meta.tag: the bytes
// pool-compose answered that request with, so that the floor pays what
// pool-compose pays to receive the request and send its response, and
// nothing else. The response is decoded at start and encoded on every
// call, as a function that answers with a message does. Mode encoded
// answers with the same file's bytes as they are, which gRPC copies
// without encoding anything, as pool-compose does with a response its
// decision cache keeps.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"google.golang.org/protobuf/proto"
)

// CLI of the floor.
type CLI struct {
	Mode               string `default:"echo" enum:"echo,fixed,encoded" help:"echo: answer with the request's desired state; fixed: answer with DIR/TAG.pb, encoded on every call; encoded: answer with DIR/TAG.pb's bytes as they are."`
	Responses          string `help:"Directory of TAG.pb responses (modes fixed and encoded)." type:"existingdir"`
	Address            string `default:"127.0.0.1:9443" help:"Address at which to listen for gRPC connections (insecure)."`
	MaxRecvMessageSize int    `default:"64" help:"Maximum size of a received message in MiB."`
}

type echo struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
}

func (echo) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return response.To(req, response.DefaultTTL), nil
}

type fixed struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
	rsps map[string]*fnv1.RunFunctionResponse
}

func (f fixed) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp, ok := f.rsps[req.GetMeta().GetTag()]
	if !ok {
		return nil, fmt.Errorf("no response for tag %q", req.GetMeta().GetTag())
	}
	return rsp, nil
}

// Run serves until the process is stopped.
func (c *CLI) Run() error {
	var srv fnv1.FunctionRunnerServiceServer = echo{}
	if c.Mode != "echo" {
		files, err := filepath.Glob(filepath.Join(c.Responses, "*.pb"))
		if err != nil {
			return err
		}
		f := fixed{rsps: map[string]*fnv1.RunFunctionResponse{}}
		for _, p := range files {
			b, err := os.ReadFile(p) //nolint:gosec // test tooling reads the directory it is given
			if err != nil {
				return err
			}
			rsp := &fnv1.RunFunctionResponse{}
			if err := proto.Unmarshal(b, rsp); err != nil {
				return fmt.Errorf("cannot read %s: %w", p, err)
			}
			if c.Mode == "encoded" {
				// The bytes as the response's unknown fields, which
				// encoding writes as they are.
				rsp = &fnv1.RunFunctionResponse{}
				rsp.ProtoReflect().SetUnknown(b)
			}
			f.rsps[strings.TrimSuffix(filepath.Base(p), ".pb")] = rsp
		}
		srv = f
	}
	return function.Serve(srv,
		function.Listen("tcp", c.Address),
		function.Insecure(true),
		function.WithMetricsServer(""),
		function.MaxRecvMessageSize(c.MaxRecvMessageSize*1024*1024))
}

func main() {
	ctx := kong.Parse(&CLI{}, kong.Description("A composition function that answers as cheaply as possible, for benchmarks."))
	ctx.FatalIfErrorf(ctx.Run())
}
