package watch

import (
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"weak"

	"github.com/burstpool/burstpool/internal/capacity"
)

// aims holds one copy of each Aim the pods of a cluster ask for, for as
// long as a pod holds it: the executors of one template ask for the same
// nodes, and a burst of thousands of waiting executors then keeps one Aim.
var aims = aimTable{m: map[string]weak.Pointer[capacity.Aim]{}}

// An aimTable interns Aims by their content. An entry goes once no pod
// holds its Aim any longer, so what tenants make up does not accumulate.
type aimTable struct {
	mu sync.Mutex
	m  map[string]weak.Pointer[capacity.Aim]
}

// intern returns the table's copy of an Aim equal to a, making a that copy
// when there is none.
func (t *aimTable) intern(a *capacity.Aim) *capacity.Aim {
	k := aimKey(a)
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.m[k]; ok {
		if held := p.Value(); held != nil {
			return held
		}
	}
	p := weak.Make(a)
	t.m[k] = p
	runtime.AddCleanup(a, t.forget, aimEntry{k, p})
	return a
}

type aimEntry struct {
	key string
	p   weak.Pointer[capacity.Aim]
}

// forget drops the entry of an Aim no pod holds, unless a newer Aim took
// its key.
func (t *aimTable) forget(e aimEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m[e.key] == e.p {
		delete(t.m, e.key)
	}
}

// aimKey encodes everything of an Aim, unambiguously.
func aimKey(a *capacity.Aim) string {
	var b strings.Builder
	w := func(ss ...string) {
		for _, s := range ss {
			b.WriteString(strconv.Itoa(len(s)))
			b.WriteByte(':')
			b.WriteString(s)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(a.NodeSelector)) {
		w(k, a.NodeSelector[k])
	}
	b.WriteByte('|')
	if a.Affinity != nil {
		b.WriteByte('A')
	}
	for _, t := range a.Affinity {
		b.WriteByte('(')
		for _, r := range t {
			w(r.Key, string(r.Operator), strconv.FormatBool(r.Field), strconv.Itoa(len(r.Values)))
			w(r.Values...)
		}
		b.WriteByte(')')
	}
	b.WriteByte('|')
	for _, t := range a.Tolerations {
		seconds := "-"
		if t.TolerationSeconds != nil {
			seconds = strconv.FormatInt(*t.TolerationSeconds, 10)
		}
		w(t.Key, string(t.Operator), t.Value, string(t.Effect), seconds)
	}
	return b.String()
}
