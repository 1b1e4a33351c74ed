package main

import (
	"sync"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
)

// maxRendered bounds the render cache; when full it starts over.
const maxRendered = 4096

// renderCache keeps the encoded form of Lazy objects by Key, so a pool's
// unchanged warmup DaemonSets are not rebuilt and re-encoded on every call.
// It is safe for concurrent use; cached Structs are never modified.
type renderCache struct {
	mu sync.Mutex
	m  map[string]*structpb.Struct
}

// render returns l encoded, from the cache when l.Key is there.
func (c *renderCache) render(l decision.Lazy) (*structpb.Struct, error) {
	if c == nil || l.Key == "" {
		return resource.AsStruct(l.Build())
	}
	c.mu.Lock()
	s, ok := c.m[l.Key]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err := resource.AsStruct(l.Build())
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxRendered {
		c.m = make(map[string]*structpb.Struct)
	}
	c.m[l.Key] = s
	c.mu.Unlock()
	return s, nil
}
