package watch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	pbserializer "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// watchFrames returns n pod events as a protobuf watch streams them, a
// metav1.WatchEvent holding the encoded pod each, and the stream: each
// frame after its length.
func watchFrames(t testing.TB, n int) (frames [][]byte, stream []byte) {
	t.Helper()
	full, _ := protobuf(t)
	var b bytes.Buffer
	w := pbserializer.LengthDelimitedFramer.NewFrameWriter(&b)
	for i := range n {
		p := streamedPod()
		p.Name = p.Name + "-" + string(rune('a'+i%26))
		ev := metav1.WatchEvent{Type: "ADDED", Object: runtime.RawExtension{Raw: encode(t, full, p)}}
		data, err := ev.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		frames = append(frames, data)
	}
	return frames, b.Bytes()
}

// A countingBody is a response body that counts the reads that return
// bytes, each of which an HTTP/2 body may answer with flow-control credit.
type countingBody struct {
	io.Reader
	reads  *atomic.Int64
	closed bool
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.Reader.Read(p)
	if n > 0 {
		c.reads.Add(1)
	}
	return n, err
}

func (c *countingBody) Close() error { c.closed = true; return nil }

// TestBufferedFramer reads a pod watch's frames through the observer's client's
// framer and through the plain length-delimited one: the same frames, and
// the body is read once per buffer, not twice per event.
func TestBufferedFramer(t *testing.T) {
	const events = 500
	_, stream := watchFrames(t, events)
	framer := observerProtobuf(t).StreamSerializer.Framer
	if _, ok := framer.(bufferedFramer); !ok {
		t.Fatalf("the observer's client's protobuf framer is a %T, want a bufferedFramer", framer)
	}
	readAll := func(f runtime.Framer) ([][]byte, int64, *countingBody) {
		var reads atomic.Int64
		body := &countingBody{Reader: bytes.NewReader(stream), reads: &reads}
		r := f.NewFrameReader(body)
		var frames [][]byte
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			frames = append(frames, append([]byte(nil), buf[:n]...))
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		return frames, reads.Load(), body
	}
	want, plainReads, _ := readAll(pbserializer.LengthDelimitedFramer)
	got, reads, body := readAll(framer)
	if len(want) != events {
		t.Fatalf("the plain framer read %d frames, want %d", len(want), events)
	}
	if len(got) != len(want) {
		t.Fatalf("%d frames read through the buffer, %d plain", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("frame %d differs: %d bytes through the buffer, %d plain", i, len(got[i]), len(want[i]))
		}
	}
	if !body.closed {
		t.Error("closing the frame reader left the body open")
	}
	if most := int64(len(stream)/watchBuffer + 1); reads > most {
		t.Errorf("%d reads of a %d-byte body, want at most %d (one per %d bytes)", reads, len(stream), most, watchBuffer)
	}
	if plainReads < 2*events {
		t.Errorf("the plain framer read the body %d times for %d events; the comparison no longer shows what the buffer saves", plainReads, events)
	}
	t.Logf("%d events, %d bytes: %d reads of the body buffered, %d plain", events, len(stream), reads, plainReads)
}

// BenchmarkWatchStream streams pod events from an HTTP/2 server over TLS
// on loopback, as the API server serves a pod watch, to a watch of the pod
// client, buffered as it is and with the plain framer. Each event is
// flushed on its own, as the API server does when it has no other event
// queued. It reports the CPU both ends use per event and the reads of
// the HTTP/2 body per event: every read that brings 4 KiB of
// unacknowledged bytes sends a WINDOW_UPDATE
// (golang.org/x/net/http2, inflowMinRefresh).
func BenchmarkWatchStream(b *testing.B) {
	const events = 2000
	frames, _ := watchFrames(b, events)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", runtime.ContentTypeProtobuf+";stream=watch")
		w.WriteHeader(http.StatusOK)
		fw := pbserializer.LengthDelimitedFramer.NewFrameWriter(w)
		for _, f := range frames {
			if _, err := fw.Write(f); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	b.Cleanup(srv.Close)
	for _, tc := range []struct {
		name     string
		buffered bool
	}{{"Buffered", true}, {"Plain", false}} {
		b.Run(tc.name, func(b *testing.B) {
			var reads atomic.Int64
			cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, ContentConfig: rest.ContentConfig{ContentType: runtime.ContentTypeProtobuf},
				WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
					return roundTripper(func(req *http.Request) (*http.Response, error) {
						resp, err := rt.RoundTrip(req)
						if err == nil {
							resp.Body = &countingBody{Reader: resp.Body, reads: &reads}
						}
						return resp, err
					})
				}}
			var codecs runtime.NegotiatedSerializer = sparseCodecs{clientgoscheme.Codecs.WithoutConversion()}
			if !tc.buffered {
				codecs = plainFramed{codecs}
			}
			core, err := coreClient(cfg, codecs)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			n := 0
			cpu0 := cpuTime(b)
			for b.Loop() {
				w, err := core.Get().Resource("pods").Param("watch", "true").Watch(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				for range events {
					ev := <-w.ResultChan()
					if _, ok := ev.Object.(*corev1.Pod); !ok {
						b.Fatalf("event %v of a %T, want a pod", ev.Type, ev.Object)
					}
				}
				w.Stop()
				n += events
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/event")
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(n), "cpu-ns/event")
			b.ReportMetric(float64(reads.Load())/float64(n), "bodyreads/event")
		})
	}
}

// cpuTime is the CPU time this process has used, the server's and the
// client's alike.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// plainFramed is the observer's client's codecs with the plain length-delimited
// framer in place of the buffered one.
type plainFramed struct{ runtime.NegotiatedSerializer }

func (c plainFramed) SupportedMediaTypes() []runtime.SerializerInfo {
	infos := append([]runtime.SerializerInfo(nil), c.NegotiatedSerializer.SupportedMediaTypes()...)
	for i := range infos {
		if st := infos[i].StreamSerializer; st != nil {
			if f, ok := st.Framer.(bufferedFramer); ok {
				plain := *st
				plain.Framer = f.Framer
				infos[i].StreamSerializer = &plain
			}
		}
	}
	return infos
}
