package main

import (
	"context"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
)

// A hit in the decision cache (decisions.go) costs receiving the request,
// digesting it, and sending the response. Encoding a response costs about
// as much as decoding the request, so the cache keeps each response's
// encoding beside it, made once when the response was decided, and the
// gRPC server sends that on every hit rather than encoding the response
// again.

// wireServer is the Function the gRPC server serves: it answers a request as
// Function.RunFunction does, but sends a response the decision cache keeps
// as its encoding, which gRPC copies as it is; any other response is a
// message gRPC encodes.
type wireServer struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	f *Function
}

// RunFunction implements fnv1.FunctionRunnerServiceServer.
func (s wireServer) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp, enc := s.f.answer(req)
	if enc != nil {
		return enc, nil
	}
	return rsp, nil
}

// encode returns a response that encodes to the very bytes rsp encodes
// to, and that costs only a copy of them to encode: an empty response
// that holds rsp's encoding as its unknown fields. Protobuf writes unknown
// fields as they are, and a reader that knows RunFunctionResponse, as
// Crossplane does, reads them as rsp's own fields. The error is the one
// encoding rsp gives (a string that is not UTF-8).
func encode(rsp *fnv1.RunFunctionResponse) (*fnv1.RunFunctionResponse, error) {
	b, err := proto.Marshal(rsp)
	if err != nil {
		return nil, err
	}
	enc := &fnv1.RunFunctionResponse{}
	enc.ProtoReflect().SetUnknown(b)
	return enc, nil
}

// encodedSize estimates the heap an encoding of encode holds.
func encodedSize(enc *fnv1.RunFunctionResponse) int64 {
	return messageBytes + int64(cap(enc.ProtoReflect().GetUnknown()))
}
