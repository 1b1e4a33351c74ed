package main

import (
	"container/list"
	"sync"
	"sync/atomic"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
)

// Crossplane calls the function again with the same request whenever it
// polls a composite resource (every minute, the response's TTL) and
// whenever a composed resource changes in a way that leaves the request as
// it was. decisionCache answers such a request with the response it was
// answered with before, instead of deciding it again.
//
// A response is kept under the digest of the whole request (digestOf): the
// observed XPool, its composed resources, every required resource (the
// QueryServices, the CRDs, the EnvironmentConfigs, the owners of the
// pool's names), the desired state, the function input, the context and
// the request's tag. The function reads nothing else but the clock, and
// the decision says how its response depends on it (decision.Output.Until):
// a response that holds at any later time is kept as it is; one that holds
// until a known instant (a watch circuit's cooldown) is served only
// before it; one that depends on the very reading of the clock (a report
// checked now, a CapacityBuffer's wait or an unused image's retention
// counted down) is not kept.
//
// Each response is kept with its encoding, which the gRPC server sends on
// a hit (encoded.go). The cache is bounded in entries and in bytes (an
// estimate of the memory each response and its encoding hold, sizeOf and
// encodedSize), and evicts the least recently used response first; the
// function's --decision-cache-entries and --decision-cache-mib set the
// bounds.

// decisionCache keeps responses by request digest, least recently used
// first out. It is safe for concurrent use. The responses it holds are
// shared with every caller it serves: nobody may modify them.
type decisionCache struct {
	maxEntries int
	maxBytes   int64

	mu    sync.Mutex
	bytes int64
	lru   list.List // of *decided, most recently used first
	byKey map[digest]*list.Element

	hits, misses, uncacheable atomic.Uint64
}

// decided is a response, its encoding, and the span of clock readings it
// holds for.
type decided struct {
	key            digest
	rsp, enc       *fnv1.RunFunctionResponse
	decided, until time.Time
	bytes          int64
}

// newDecisionCache returns a cache of at most maxEntries responses and
// maxBytes bytes; nil when either is not positive, which decides every
// request.
func newDecisionCache(maxEntries int, maxBytes int64) *decisionCache {
	if maxEntries <= 0 || maxBytes <= 0 {
		return nil
	}
	return &decisionCache{maxEntries: maxEntries, maxBytes: maxBytes, byKey: map[digest]*list.Element{}}
}

// get returns the response kept under key if it holds at now, and its
// encoding (encode). One that holds until a known instant closer than its
// TTL is served with the TTL shortened to that instant (at least
// decision.MinRequeueAfter), as deciding it at now would have: Crossplane
// then comes back when the decision may change (a warm window's lead or
// close), not up to a TTL later. Such a response has no encoding (enc is
// nil).
func (c *decisionCache) get(key digest, now time.Time) (rsp, enc *fnv1.RunFunctionResponse, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return nil, nil, false
	}
	d := e.Value.(*decided) //nolint:forcetypeassert // the list holds only *decided
	if !decision.Holds(d.decided, d.until, now) {
		c.remove(e)
		return nil, nil, false
	}
	c.lru.MoveToFront(e)
	c.hits.Add(1)
	if left := d.until.Sub(now); !d.until.IsZero() && left < d.rsp.GetMeta().GetTtl().AsDuration() {
		return withTTL(d.rsp, max(left, decision.MinRequeueAfter)), nil, true
	}
	return d.rsp, d.enc, true
}

// withTTL is rsp with its TTL set to ttl: a new response that shares every
// other field with rsp, which stays as it was.
func withTTL(rsp *fnv1.RunFunctionResponse, ttl time.Duration) *fnv1.RunFunctionResponse {
	out := shallowCopy(rsp)
	meta := proto.Clone(rsp.GetMeta()).(*fnv1.ResponseMeta) //nolint:forcetypeassert // Clone returns the type it is given
	meta.Ttl = durationpb.New(ttl)
	out.Meta = meta
	return out
}

// put keeps rsp, decided at now, under key with its encoding, and returns
// that encoding (encode of wire, a response that encodes as rsp does);
// unless rsp holds for that reading of the clock only (until is now or
// before), is larger than the whole cache, or cannot be encoded: then it
// keeps nothing and returns nil. It evicts the least recently used
// responses to stay within the bounds.
func (c *decisionCache) put(key digest, rsp, wire *fnv1.RunFunctionResponse, now, until time.Time) *fnv1.RunFunctionResponse {
	if !until.IsZero() && !now.Before(until) {
		c.uncacheable.Add(1)
		return nil
	}
	c.misses.Add(1)
	n := sizeOf(rsp.ProtoReflect())
	if n > c.maxBytes {
		return nil
	}
	enc, err := encode(wire)
	if err != nil {
		// gRPC fails to send it too, and says why.
		return nil
	}
	n += encodedSize(enc)
	if n > c.maxBytes {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		c.remove(e)
	}
	c.byKey[key] = c.lru.PushFront(&decided{key: key, rsp: rsp, enc: enc, decided: now, until: until, bytes: n})
	c.bytes += n
	for c.lru.Len() > c.maxEntries || c.bytes > c.maxBytes {
		c.remove(c.lru.Back())
	}
	return enc
}

func (c *decisionCache) remove(e *list.Element) {
	d := c.lru.Remove(e).(*decided) //nolint:forcetypeassert // the list holds only *decided
	delete(c.byKey, d.key)
	c.bytes -= d.bytes
}

// size returns how many responses the cache holds and their bytes.
func (c *decisionCache) size() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}

var (
	decisionsDesc = prometheus.NewDesc("burstpool_function_decisions_total",
		"RunFunction calls by how they were answered: hit (a response kept for the same request), miss (decided and kept), uncacheable (decided, not kept: the decision depends on the clock's reading).",
		[]string{"result"}, nil)
	decisionCacheBytesDesc = prometheus.NewDesc("burstpool_function_decision_cache_bytes",
		"Estimated memory held by the responses the decision cache keeps, in bytes.", nil, nil)
	decisionCacheEntriesDesc = prometheus.NewDesc("burstpool_function_decision_cache_entries",
		"Responses the decision cache keeps.", nil, nil)
)

// Describe implements prometheus.Collector.
func (c *decisionCache) Describe(ch chan<- *prometheus.Desc) {
	ch <- decisionsDesc
	ch <- decisionCacheBytesDesc
	ch <- decisionCacheEntriesDesc
}

// Collect implements prometheus.Collector.
func (c *decisionCache) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(decisionsDesc, prometheus.CounterValue, float64(c.hits.Load()), "hit")
	ch <- prometheus.MustNewConstMetric(decisionsDesc, prometheus.CounterValue, float64(c.misses.Load()), "miss")
	ch <- prometheus.MustNewConstMetric(decisionsDesc, prometheus.CounterValue, float64(c.uncacheable.Load()), "uncacheable")
	entries, bytes := c.size()
	ch <- prometheus.MustNewConstMetric(decisionCacheBytesDesc, prometheus.GaugeValue, float64(bytes))
	ch <- prometheus.MustNewConstMetric(decisionCacheEntriesDesc, prometheus.GaugeValue, float64(entries))
}

// Estimated heap bytes of a message's parts, each with its allocation's
// rounding and a map's spare room: a Struct or a message, a map entry, a
// Value with its kind, a list element; strings count their bytes beside.
const (
	messageBytes  = 96
	mapBytes      = 256
	mapEntryBytes = 80
	valueBytes    = 96
	elementBytes  = 8
	stringBytes   = 16
)

// sizeOf estimates the heap memory m holds, everything it reaches
// included: an upper bound, as the parts it shares with other messages
// (the render cache's objects, the request's) are counted as its own.
func sizeOf(m protoreflect.Message) int64 {
	if !m.IsValid() {
		return 0
	}
	switch v := m.Interface().(type) {
	case *structpb.Struct:
		return structSize(v)
	case *structpb.Value:
		return valueSize(v)
	case *structpb.ListValue:
		return listSize(v)
	}
	n := int64(messageBytes + len(m.GetUnknown()))
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			n += messageBytes + int64(l.Len())*elementBytes
			for i := range l.Len() {
				n += singularSize(fd, l.Get(i))
			}
		case fd.IsMap():
			n += mapBytes
			v.Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
				n += mapEntryBytes + singularSize(fd.MapKey(), k.Value()) + singularSize(fd.MapValue(), v)
				return true
			})
		default:
			n += singularSize(fd, v)
		}
		return true
	})
	return n
}

func singularSize(fd protoreflect.FieldDescriptor, v protoreflect.Value) int64 {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return stringBytes + int64(len(v.String()))
	case protoreflect.BytesKind:
		return stringBytes + int64(len(v.Bytes()))
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return sizeOf(v.Message())
	}
	return elementBytes
}

func structSize(s *structpb.Struct) int64 {
	if s == nil {
		return 0
	}
	n := int64(messageBytes + mapBytes)
	for k, v := range s.GetFields() {
		n += mapEntryBytes + stringBytes + int64(len(k)) + valueSize(v)
	}
	return n
}

func listSize(l *structpb.ListValue) int64 {
	if l == nil {
		return 0
	}
	n := int64(messageBytes) + int64(len(l.GetValues()))*elementBytes
	for _, v := range l.GetValues() {
		n += valueSize(v)
	}
	return n
}

func valueSize(v *structpb.Value) int64 {
	n := int64(valueBytes)
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		n += stringBytes + int64(len(k.StringValue))
	case *structpb.Value_StructValue:
		n += structSize(k.StructValue)
	case *structpb.Value_ListValue:
		n += listSize(k.ListValue)
	}
	return n
}
