package main

import (
	"fmt"
	"runtime"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
)

// lazyObject is a Lazy of about size bytes of annotation, under key.
func lazyObject(key string, size int) decision.Lazy {
	return decision.Lazy{Key: key, Build: func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind("DaemonSet")
		u.SetName(key)
		u.SetAnnotations(map[string]string{"pad": string(make([]byte, size))})
		return u
	}}
}

// TestRenderCacheBound fills the render cache with distinct objects far
// past its byte bound: what it counts stays under the bound, and the heap
// it really holds stays under what it counts.
func TestRenderCacheBound(t *testing.T) {
	const bound = 1 << 20
	c := &renderCache{maxBytes: bound}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 2000 {
		if _, err := c.render(lazyObject(fmt.Sprintf("ds-%d", i), 4<<10)); err != nil {
			t.Fatal(err)
		}
		if _, bytes := c.size(); bytes > bound {
			t.Fatalf("after %d objects the cache counts %d bytes, above its bound of %d", i+1, bytes, bound)
		}
	}
	entries, bytes := c.size()
	if entries == 0 || bytes == 0 {
		t.Fatalf("the cache holds %d entries, %d bytes: want the latest objects kept", entries, bytes)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if held := int64(after.HeapInuse) - int64(before.HeapInuse); held > bytes+bound/4 {
		t.Errorf("the heap grew by %d bytes holding a cache counted at %d", held, bytes)
	}
	runtime.KeepAlive(c)

	// An object larger than the whole bound is rendered, not kept.
	big := lazyObject("big", 2*bound)
	if _, err := c.render(big); err != nil {
		t.Fatal(err)
	}
	if _, bytes := c.size(); bytes > bound {
		t.Errorf("an object above the bound was kept: the cache counts %d bytes", bytes)
	}
}
