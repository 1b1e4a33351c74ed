package watch

import (
	"bufio"
	"io"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A pod watch streams every pool pod of the cluster when it starts, as
// protobuf. Most of each pod's bytes are parts the capacity view (Pod)
// never reads: its managed fields, its volumes, its containers' commands,
// environment and probes. Decoding those into a corev1.Pod, only for the
// transform to drop them, is most of the observer's CPU while a provider
// starts, on the same cores as the API server that streams them. The pod
// client therefore decodes pods through sparseSerializer, which cuts those
// parts out of the protobuf before the generated decoder reads the rest.

// A cut says which fields of a protobuf message to leave out, by field
// number, and which embedded messages to cut in turn. Fields it does not
// name are kept: a field a later Kubernetes adds reaches the view until it
// is named here.
type cut struct {
	drop fieldSet
	in   map[protowire.Number]*cut
}

// A fieldSet holds field numbers below 64, a bit each: a cut is read for
// every field of every pod.
type fieldSet uint64

func (s fieldSet) has(n protowire.Number) bool { return n < 64 && s&(1<<n) != 0 }

// Field numbers are those of k8s.io/api/core/v1/generated.proto and
// k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto. TestSparsePod
// decodes randomly filled pods both ways and finds the same view, so a
// field Pod reads cannot be cut here unnoticed.
var (
	// Container: command, args, workingDir, ports, env, volumeMounts,
	// probes, lifecycle, terminationMessagePath, securityContext,
	// envFrom, volumeDevices, resizePolicy, restartPolicyRules. Kept:
	// name, image, resources and the small scalars.
	cutContainer = &cut{drop: numbers(3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 15, 19, 21, 22, 23, 25)}

	// ContainerStatus: imageID, containerID, allocatedResources,
	// resources, volumeMounts, user, allocatedResourcesStatus.
	cutContainerStatus = &cut{drop: numbers(7, 8, 10, 11, 12, 13, 14)}

	cutPod = &cut{in: map[protowire.Number]*cut{
		// ObjectMeta: managedFields.
		1: {drop: numbers(17)},
		// PodSpec: volumes, securityContext, hostAliases, dnsConfig,
		// topologySpreadConstraints, ephemeralContainers; containers
		// and init containers are cut in turn.
		2: {drop: numbers(1, 14, 23, 26, 33, 34), in: map[protowire.Number]*cut{2: cutContainer, 20: cutContainer}},
		// PodStatus: podIPs, ephemeralContainerStatuses,
		// resourceClaimStatuses, hostIPs, allocatedResources, resources;
		// container statuses are cut in turn.
		3: {drop: numbers(12, 13, 15, 16, 19, 20), in: map[protowire.Number]*cut{8: cutContainerStatus, 10: cutContainerStatus}},
	}}
)

func numbers(ns ...protowire.Number) fieldSet {
	var s fieldSet
	for _, n := range ns {
		if n >= 64 {
			panic("a cut names field numbers below 64")
		}
		s |= 1 << n
	}
	return s
}

// eachField calls fn with each field of msg in turn: its number, its wire
// type, the whole field and the length of its tag; it stops when fn
// returns false. It returns false when msg is not well-formed protobuf.
func eachField(msg []byte, fn func(num protowire.Number, typ protowire.Type, field []byte, tag int) bool) bool {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return false
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return false
		}
		if !fn(num, typ, msg[:n+m], n) {
			return true
		}
		msg = msg[n+m:]
	}
	return true
}

// bytesValue is the value of a field of wire type bytes.
func bytesValue(field []byte, tag int) []byte {
	v, _ := protowire.ConsumeBytes(field[tag:])
	return v
}

// apply appends msg to out without the fields c cuts. It returns false,
// and out as it was, when msg is not well-formed protobuf. scratch holds a
// buffer for each level of embedded message below this one.
func (c *cut) apply(out, msg []byte, scratch [][]byte) ([]byte, bool) {
	start := len(out)
	ok := true
	wellFormed := eachField(msg, func(num protowire.Number, typ protowire.Type, field []byte, tag int) bool {
		if c.drop.has(num) {
			return true
		}
		in := c.in[num]
		if in == nil || typ != protowire.BytesType || len(scratch) == 0 {
			out = append(out, field...)
			return true
		}
		var sub []byte
		if sub, ok = in.apply(scratch[0][:0], bytesValue(field, tag), scratch[1:]); !ok {
			return false
		}
		scratch[0] = sub
		out = protowire.AppendTag(out, num, typ)
		out = protowire.AppendBytes(out, sub)
		return true
	})
	if !wellFormed || !ok {
		return out[:start], false
	}
	return out, true
}

// buffers holds the buffers a pod is cut with: the pod, and one for each
// level of embedded message the cut descends into.
var buffers = sync.Pool{New: func() any { return &[4][]byte{} }}

// sparseSerializer is the protobuf serializer of the observer's client, which
// decodes each pod from its cut protobuf and everything else as the
// serializer it wraps does.
type sparseSerializer struct {
	runtime.Serializer
}

// protobufPrefix starts every object the API server encodes as protobuf
// (k8s.io/apimachinery/pkg/runtime/serializer/protobuf).
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00}

var podKind = corev1.SchemeGroupVersion.WithKind("Pod")

func (s sparseSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	pod, ok := into.(*corev1.Pod)
	if into != nil && !ok {
		return s.Serializer.Decode(data, defaults, into)
	}
	raw, ok := podBytes(data)
	if !ok {
		return s.Serializer.Decode(data, defaults, into)
	}
	b := buffers.Get().(*[4][]byte)
	defer buffers.Put(b)
	cut, ok := cutPod.apply(b[0][:0], raw, b[1:])
	if !ok {
		return s.Serializer.Decode(data, defaults, into)
	}
	b[0] = cut
	if pod == nil {
		pod = &corev1.Pod{}
	} else {
		*pod = corev1.Pod{}
	}
	if err := pod.Unmarshal(cut); err != nil {
		return s.Serializer.Decode(data, defaults, into)
	}
	gvk := podKind
	pod.SetGroupVersionKind(gvk)
	return pod, &gvk, nil
}

// podBytes returns the protobuf of the pod data holds (the serializer's
// prefix, then a runtime.Unknown of apiVersion v1, kind Pod, no content
// encoding); false for anything else.
func podBytes(data []byte) ([]byte, bool) {
	if len(data) < len(protobufPrefix) || string(data[:len(protobufPrefix)]) != string(protobufPrefix) {
		return nil, false
	}
	var raw []byte
	pod, plain := false, true
	wellFormed := eachField(data[len(protobufPrefix):], func(num protowire.Number, typ protowire.Type, field []byte, tag int) bool {
		if typ != protowire.BytesType {
			return true
		}
		switch v := bytesValue(field, tag); num {
		case 1: // typeMeta
			pod = isPodType(v)
		case 2: // raw
			raw = v
		case 3, 4: // contentEncoding, contentType: anything but plain protobuf
			plain = len(v) == 0
		}
		return plain
	})
	return raw, wellFormed && plain && pod && raw != nil
}

// isPodType reports whether a protobuf runtime.TypeMeta says v1 Pod.
func isPodType(meta []byte) bool {
	var version, kind bool
	wellFormed := eachField(meta, func(num protowire.Number, typ protowire.Type, field []byte, tag int) bool {
		if typ == protowire.BytesType {
			switch v := bytesValue(field, tag); num {
			case 1:
				version = string(v) == podKind.Version
			case 2:
				kind = string(v) == podKind.Kind
			}
		}
		return true
	})
	return wellFormed && version && kind
}

// sparseCodecs is a client's NegotiatedSerializer whose protobuf
// serializer is a sparseSerializer, and whose protobuf watches are read
// through a bufferedFramer.
type sparseCodecs struct {
	runtime.NegotiatedSerializer
}

func (c sparseCodecs) SupportedMediaTypes() []runtime.SerializerInfo {
	infos := append([]runtime.SerializerInfo(nil), c.NegotiatedSerializer.SupportedMediaTypes()...)
	for i := range infos {
		if infos[i].MediaType != runtime.ContentTypeProtobuf {
			continue
		}
		infos[i].Serializer = sparseSerializer{infos[i].Serializer}
		if st := infos[i].StreamSerializer; st != nil {
			buffered := *st
			buffered.Framer = bufferedFramer{st.Framer}
			infos[i].StreamSerializer = &buffered
		}
	}
	return infos
}

// watchBuffer is how much of a watch's body a bufferedFramer reads at
// once: four of the API server's HTTP/2 frames of 16 KiB.
const watchBuffer = 64 << 10

// A bufferedFramer reads a watch's frames out of a buffer. Over HTTP/2,
// every read of a response body that brings the unacknowledged bytes to
// 4 KiB sends the API server a WINDOW_UPDATE frame and flushes the
// connection: a write and a TLS record on the client, a frame to read
// and process on the server. The length-delimited framer reads each event
// twice (its length, then its bytes), so a start's stream of pool pods,
// a few KiB each, would return credit for nearly every pod. Read through
// a buffer, the body gives up to watchBuffer bytes at a time of what has
// already arrived; a read never waits to fill it.
type bufferedFramer struct{ runtime.Framer }

func (f bufferedFramer) NewFrameReader(r io.ReadCloser) io.ReadCloser {
	return f.Framer.NewFrameReader(bufferedBody{bufio.NewReaderSize(r, watchBuffer), r})
}

// A bufferedBody reads through its buffer and closes the body under it.
type bufferedBody struct {
	*bufio.Reader
	io.Closer
}
