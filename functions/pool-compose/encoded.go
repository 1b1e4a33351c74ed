package main

import (
	"context"
	"maps"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// A hit in the decision cache (decisions.go) costs receiving the request,
// digesting it, and sending the response. Encoding a response costs about
// as much as decoding the request, so the cache keeps each response's
// encoding beside it, made once when the response was decided, and the
// gRPC server sends that on every hit rather than encoding the response
// again.
//
// A response that is decided is mostly composed objects from the render
// cache (render.go), unchanged since they were built: every warmup
// DaemonSet, the NodePool, the PoolCapacity, the admission policy. Each
// keeps its wire encoding too, made the first time it is sent, and a
// decided response is sent with those encodings in place of the objects
// (renderCache.wire), so that a call that decides encodes only what it
// built anew: the XPool's status and the objects that changed.

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
	rsp, wire := s.f.answer(req, true)
	if wire != nil {
		return wire, nil
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

// wire returns a response that encodes as rsp does, with every desired
// object that came from the cache as its wire encoding (wireStruct), which
// encoding copies as it is; rsp itself when none did. It shares every
// other field with rsp, which stays as it was.
func (c *renderCache) wire(rsp *fnv1.RunFunctionResponse) *fnv1.RunFunctionResponse {
	if c == nil {
		return rsp
	}
	var resources map[string]*fnv1.Resource
	for n, r := range rsp.GetDesired().GetResources() {
		enc := c.wireStruct(r.GetResource())
		if enc == nil {
			continue
		}
		if resources == nil {
			resources = maps.Clone(rsp.GetDesired().GetResources())
		}
		r = shallowCopy(r)
		r.Resource = enc
		resources[n] = r
	}
	if resources == nil {
		return rsp
	}
	out := shallowCopy(rsp)
	out.Desired = shallowCopy(rsp.GetDesired())
	out.Desired.Resources = resources
	return out
}

// wireStruct returns the wire encoding of s if the cache holds s, making
// it the first time: an empty Struct that holds s's encoding as its
// unknown fields, as encode does for a response. Nil when the cache does
// not hold s, or s cannot be encoded.
func (c *renderCache) wireStruct(s *structpb.Struct) *structpb.Struct {
	if s == nil {
		return nil
	}
	c.mu.Lock()
	enc, ok := c.encodings[s]
	c.mu.Unlock()
	if !ok || enc != nil {
		return enc
	}
	b, err := proto.Marshal(s)
	if err != nil {
		return nil
	}
	enc = &structpb.Struct{}
	enc.ProtoReflect().SetUnknown(b)
	n := messageBytes + int64(cap(b))
	c.mu.Lock()
	if prev, ok := c.encodings[s]; ok && prev == nil && c.bytes+n <= c.limit() {
		// Still held, encoded by no other call meanwhile, and within
		// the bound.
		c.encodings[s] = enc
		c.bytes += n
	}
	c.mu.Unlock()
	return enc
}

// shallowCopy returns a new message that shares every field of m, its
// unknown fields included.
func shallowCopy[M proto.Message](m M) M {
	src := m.ProtoReflect()
	out := src.New()
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		out.Set(fd, v)
		return true
	})
	if u := src.GetUnknown(); len(u) > 0 {
		out.SetUnknown(u)
	}
	return out.Interface().(M) //nolint:forcetypeassert // New returns a message of m's type
}
