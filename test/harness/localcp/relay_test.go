package localcp

import (
	"fmt"
	"io"
	"net"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParsePair(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   Pair
		err    bool
	}{
		"TCPToUnix": {
			reason: "A TCP listener relays to a unix socket.",
			in:     "tcp:127.0.0.1:6443=unix:/run/x.sock",
			want:   Pair{Listen: "tcp:127.0.0.1:6443", Dial: "unix:/run/x.sock"},
		},
		"UnixToTCP": {
			reason: "A unix listener relays to a TCP port.",
			in:     "unix:/run/x.sock=tcp:127.0.0.1:8081",
			want:   Pair{Listen: "unix:/run/x.sock", Dial: "tcp:127.0.0.1:8081"},
		},
		"NoSeparator": {
			reason: "A pair needs LISTEN=DIAL.",
			in:     "tcp:127.0.0.1:6443",
			err:    true,
		},
		"UnknownNetwork": {
			reason: "Only tcp and unix addresses are relayed.",
			in:     "udp:127.0.0.1:53=unix:/x",
			err:    true,
		},
		"EmptyAddress": {
			reason: "An address needs something after its network.",
			in:     "tcp:=unix:/x",
			err:    true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parsePair(tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("%s\nparsePair(%q): error %v, want error %t", tc.reason, tc.in, err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nparsePair(%q): -want, +got:\n%s", tc.reason, tc.in, diff)
			}
			if !tc.err {
				if back, _ := parsePair(got.String()); back != got {
					t.Errorf("%s\n%v does not survive String and parsePair: got %v", tc.reason, got, back)
				}
			}
		})
	}
}

// TestRelayRoundTrip relays TCP -> unix socket -> TCP, the shape of a host
// port reached from inside a network namespace, and checks bytes flow both
// ways and a half-close reaches the far end.
func TestRelayRoundTrip(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close() //nolint:errcheck // test listener
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()       //nolint:errcheck // test connection
				b, _ := io.ReadAll(c) // until the client half-closes
				_, _ = fmt.Fprintf(c, "echo:%s", b)
			}()
		}
	}()

	sock := filepath.Join(t.TempDir(), "r.sock")
	host, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close() //nolint:errcheck // test listener
	go serve(host, "tcp:"+echo.Addr().String())
	inside, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer inside.Close() //nolint:errcheck // test listener
	go serve(inside, "unix:"+sock)

	c, err := net.Dial("tcp", inside.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close() //nolint:errcheck // test connection
	if _, err := io.WriteString(c, "ping"); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("echo:ping", string(got)); diff != "" {
		t.Errorf("relayed reply: -want, +got:\n%s", diff)
	}
}

func TestRelayArgs(t *testing.T) {
	got := RelayArgs([]Pair{{Listen: "tcp:127.0.0.1:1", Dial: "unix:/s"}}, true, "/bin/k", "-v")
	want := []string{"--lo-up", "--pair", "tcp:127.0.0.1:1=unix:/s", "--", "/bin/k", "-v"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RelayArgs: -want, +got:\n%s", diff)
	}
}
