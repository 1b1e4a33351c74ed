package main

import (
	"sync"

	"github.com/crossplane/function-sdk-go/resource"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
)

// The render cache's bounds: entries, and the heap its objects hold as
// sizeOf counts it (an upper bound), with their encodings once sent. A
// warmup DaemonSet is counted at about 48 KB and its encoding at 3.5 KB,
// so the byte bound holds some 1,300 of them; when either bound would be
// passed the cache starts over.
const (
	maxRendered      = 4096
	maxRenderedBytes = 64 << 20
)

// renderCache keeps the encoded form of Lazy objects by Key, so a pool's
// unchanged warmup DaemonSets are not rebuilt and re-encoded on every call;
// and, once one is sent, its wire encoding (wire, encoded.go). It is safe
// for concurrent use; cached Structs are never modified.
type renderCache struct {
	mu sync.Mutex
	m  map[string]*structpb.Struct
	// encodings holds every Struct of m: its wire encoding once it was made
	// (wireStruct), else nil.
	encodings map[*structpb.Struct]*structpb.Struct
	bytes     int64
	// maxBytes overrides maxRenderedBytes when set (tests).
	maxBytes int64
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
	n := structSize(s) + int64(len(l.Key)) + 2*mapEntryBytes
	limit := c.limit()
	if n > limit {
		return s, nil
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxRendered || c.bytes+n > limit {
		c.m, c.encodings, c.bytes = make(map[string]*structpb.Struct), make(map[*structpb.Struct]*structpb.Struct), 0
	}
	if _, ok := c.m[l.Key]; !ok {
		c.m[l.Key] = s
		c.encodings[s] = nil
		c.bytes += n
	}
	c.mu.Unlock()
	return s, nil
}

// limit is the most bytes the cache holds.
func (c *renderCache) limit() int64 {
	if c.maxBytes > 0 {
		return c.maxBytes
	}
	return maxRenderedBytes
}

// size is what the cache holds: entries, and bytes as sizeOf counts them.
func (c *renderCache) size() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m), c.bytes
}
