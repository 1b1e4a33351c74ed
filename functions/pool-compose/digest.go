package main

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/structpb"
)

// digest is the SHA-256 of a message's canonical encoding: two messages
// with one digest are equal (short of a SHA-256 collision), their unknown
// fields included, but for those of Structs, Values and ListValues: these
// well-known types are complete, and every reader of them (AsMap,
// protojson, Crossplane's own) skips unknown fields. The encoding is
// canonical where the wire format is not: map entries, those of Structs
// included, are taken in key order; and every value is tagged with its
// kind and every string, list and map with its length, so no two
// different messages encode alike. (Two equal ones may: a nil and an
// empty Struct value, say; they are then only decided twice.)
type digest [sha256.Size]byte

// digestOf is the digest of ms, taken in order as one message.
func digestOf(ms ...proto.Message) digest {
	d := digesters.Get().(*digester)
	d.h.Reset()
	d.buf = d.buf[:0]
	for _, m := range ms {
		if m == nil {
			d.byte('0')
			continue
		}
		d.message(m.ProtoReflect())
	}
	d.flush()
	var out digest
	d.h.Sum(out[:0])
	d.fields = d.fields[:0]
	digesters.Put(d)
	return out
}

var digesters = sync.Pool{New: func() any { return &digester{h: sha256.New(), buf: make([]byte, 0, digestBuffer)} }}

// digestBuffer is how much canonical encoding a digester gathers before
// it hashes it.
const digestBuffer = 32 << 10

// digester writes a canonical encoding into a hash.
type digester struct {
	h   hash.Hash
	buf []byte
	// fields is a stack of the Struct fields being sorted, those of
	// nested Structs above those of the Structs that hold them; entries
	// is one of map entries.
	fields  []field
	entries []entry
}

// field is one field of a Struct.
type field struct {
	key   string
	value *structpb.Value
}

// entry is one entry of a map field.
type entry struct {
	key   protoreflect.MapKey
	value protoreflect.Value
}

func (d *digester) flush() {
	if len(d.buf) > 0 {
		d.h.Write(d.buf)
		d.buf = d.buf[:0]
	}
}

func (d *digester) byte(b byte) {
	d.buf = append(d.buf, b)
}

func (d *digester) uint(n uint64) {
	d.buf = binary.AppendUvarint(d.buf, n)
	if len(d.buf) >= digestBuffer {
		d.flush()
	}
}

func (d *digester) string(s string) {
	d.uint(uint64(len(s)))
	if len(s) > digestBuffer/4 {
		d.flush()
		d.h.Write([]byte(s))
		return
	}
	d.buf = append(d.buf, s...)
}

func (d *digester) bytes(b []byte) {
	d.uint(uint64(len(b)))
	if len(b) > digestBuffer/4 {
		d.flush()
		d.h.Write(b)
		return
	}
	d.buf = append(d.buf, b...)
}

// message encodes any message: the populated fields in field-number
// order, each tagged with its number, then its unknown fields. Structs,
// which hold nearly all of a request, are encoded without reflection.
func (d *digester) message(m protoreflect.Message) {
	if !m.IsValid() {
		d.byte('0')
		return
	}
	switch v := m.Interface().(type) {
	case *structpb.Struct:
		d.structValue(v)
		return
	case *structpb.Value:
		d.value(v)
		return
	case *structpb.ListValue:
		d.list(v)
		return
	}
	d.byte('M')
	d.string(string(m.Descriptor().FullName()))
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if !m.Has(fd) {
			continue
		}
		d.byte('F')
		d.uint(uint64(fd.Number()))
		v := m.Get(fd)
		switch {
		case fd.IsList():
			l := v.List()
			d.byte('L')
			d.uint(uint64(l.Len()))
			for j := range l.Len() {
				d.singular(fd, l.Get(j))
			}
		case fd.IsMap():
			d.protoMap(fd, v.Map())
		default:
			d.singular(fd, v)
		}
	}
	d.byte('U')
	d.bytes(m.GetUnknown())
}

// protoMap encodes a map field's entries in key order.
func (d *digester) protoMap(fd protoreflect.FieldDescriptor, m protoreflect.Map) {
	base := len(d.entries)
	m.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		d.entries = append(d.entries, entry{k, v})
		return true
	})
	// Nested maps push their entries above these and pop them before
	// they return, so these stay as sorted here.
	entries := d.entries[base:]
	slices.SortFunc(entries, keyOrder(fd.MapKey().Kind()))
	d.byte('P')
	d.uint(uint64(len(entries)))
	for _, e := range entries {
		d.singular(fd.MapKey(), e.key.Value())
		d.singular(fd.MapValue(), e.value)
	}
	// Cleared, so that a pooled digester holds no request.
	clear(d.entries[base:])
	d.entries = d.entries[:base]
}

// keyOrder orders the entries of a map whose keys are of kind k: strings,
// integers or booleans.
func keyOrder(k protoreflect.Kind) func(a, b entry) int {
	switch k {
	case protoreflect.StringKind:
		return compareStringKeys
	case protoreflect.BoolKind:
		return compareBoolKeys
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return compareIntKeys
	default:
		return compareUintKeys
	}
}

func compareStringKeys(a, b entry) int { return strings.Compare(a.key.String(), b.key.String()) }

func compareIntKeys(a, b entry) int { return cmp.Compare(a.key.Int(), b.key.Int()) }

func compareUintKeys(a, b entry) int { return cmp.Compare(a.key.Uint(), b.key.Uint()) }

func compareBoolKeys(a, b entry) int {
	switch x, y := a.key.Bool(), b.key.Bool(); {
	case x == y:
		return 0
	case !x:
		return -1
	default:
		return 1
	}
}

// singular encodes one value of field fd, tagged with its kind.
func (d *digester) singular(fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		d.byte('b')
		if v.Bool() {
			d.byte(1)
		} else {
			d.byte(0)
		}
	case protoreflect.EnumKind:
		d.byte('e')
		d.uint(uint64(v.Enum()))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		d.byte('i')
		d.uint(uint64(v.Int()))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		d.byte('u')
		d.uint(v.Uint())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		d.byte('f')
		d.uint(math.Float64bits(v.Float()))
	case protoreflect.StringKind:
		d.byte('s')
		d.string(v.String())
	case protoreflect.BytesKind:
		d.byte('y')
		d.bytes(v.Bytes())
	default: // messages and groups
		d.message(v.Message())
	}
}

// structValue encodes a Struct's fields in key order.
func (d *digester) structValue(s *structpb.Struct) {
	if s == nil {
		d.byte('0')
		return
	}
	d.byte('{')
	d.uint(uint64(len(s.GetFields())))
	base := len(d.fields)
	for k, v := range s.GetFields() {
		d.fields = append(d.fields, field{k, v})
	}
	// Nested Structs push their fields above these and pop them before
	// they return, so these stay as sorted here.
	fields := d.fields[base:]
	slices.SortFunc(fields, compareFields)
	for _, f := range fields {
		d.string(f.key)
		d.value(f.value)
	}
	clear(d.fields[base:])
	d.fields = d.fields[:base]
}

func compareFields(a, b field) int { return strings.Compare(a.key, b.key) }

func (d *digester) list(l *structpb.ListValue) {
	if l == nil {
		d.byte('0')
		return
	}
	d.byte('[')
	d.uint(uint64(len(l.GetValues())))
	for _, v := range l.GetValues() {
		d.value(v)
	}
}

func (d *digester) value(v *structpb.Value) {
	switch k := v.GetKind().(type) {
	case *structpb.Value_StringValue:
		d.byte('s')
		d.string(k.StringValue)
	case *structpb.Value_NumberValue:
		d.byte('d')
		d.uint(math.Float64bits(k.NumberValue))
	case *structpb.Value_BoolValue:
		if k.BoolValue {
			d.byte('t')
		} else {
			d.byte('f')
		}
	case *structpb.Value_StructValue:
		d.byte('S')
		d.structValue(k.StructValue)
	case *structpb.Value_ListValue:
		d.byte('L')
		d.list(k.ListValue)
	case *structpb.Value_NullValue:
		d.byte('n')
		d.uint(uint64(k.NullValue))
	default:
		d.byte('0')
	}
}
