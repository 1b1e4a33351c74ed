package localcp

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// RelayCommand is the first argument that makes a binary run the relay.
// The localcp CLI serves it; so does any binary whose main calls
// RelayMain(os.Args[2:]) when os.Args[1] is RelayCommand (the e2e test
// binary does, so tests need no separate build).
const RelayCommand = "relay"

// A Pair relays every connection accepted on Listen to a new connection to
// Dial. Addresses are "tcp:HOST:PORT" or "unix:PATH".
type Pair struct {
	Listen, Dial string
}

// String formats the pair the way the relay's --pair flag reads it.
func (p Pair) String() string { return p.Listen + "=" + p.Dial }

func parsePair(s string) (Pair, error) {
	l, d, ok := strings.Cut(s, "=")
	if !ok {
		return Pair{}, fmt.Errorf("relay pair %q is not LISTEN=DIAL", s)
	}
	p := Pair{Listen: l, Dial: d}
	for _, a := range []string{l, d} {
		if _, _, err := splitAddr(a); err != nil {
			return Pair{}, err
		}
	}
	return p, nil
}

// splitAddr splits "tcp:127.0.0.1:80" or "unix:/path" into network and address.
func splitAddr(a string) (network, addr string, err error) {
	n, rest, ok := strings.Cut(a, ":")
	if !ok || rest == "" || (n != "tcp" && n != "unix") {
		return "", "", fmt.Errorf("relay address %q is not tcp:HOST:PORT or unix:PATH", a)
	}
	return n, rest, nil
}

// pairFlag collects repeated --pair flags.
type pairFlag []Pair

func (f *pairFlag) String() string { return fmt.Sprint(*f) }

func (f *pairFlag) Set(s string) error {
	p, err := parsePair(s)
	if err != nil {
		return err
	}
	*f = append(*f, p)
	return nil
}

// RelayArgs builds the arguments (after RelayCommand) that RelayMain reads:
// relay the pairs, bring the loopback interface up first when loUp is set
// (a fresh network namespace has it down), and, when command is not empty,
// run it as a child once every listener is open and exit when it exits.
func RelayArgs(pairs []Pair, loUp bool, command ...string) []string {
	var args []string
	if loUp {
		args = append(args, "--lo-up")
	}
	for _, p := range pairs {
		args = append(args, "--pair", p.String())
	}
	if len(command) > 0 {
		args = append(append(args, "--"), command...)
	}
	return args
}

// RelayMain runs the relay with the arguments RelayArgs builds and returns
// the process exit code. It serves until SIGTERM or SIGINT, or until its
// child command exits. Relays are how a process in a loopback-only network
// namespace reaches host ports, and how the host reaches its ports: a unix
// socket path is visible from both namespaces, TCP loopback is not.
func RelayMain(args []string) int {
	fs := flag.NewFlagSet(RelayCommand, flag.ContinueOnError)
	var pairs pairFlag
	loUp := fs.Bool("lo-up", false, "bring the loopback interface up before listening")
	fs.Var(&pairs, "pair", "LISTEN=DIAL, each tcp:HOST:PORT or unix:PATH (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := runRelay(pairs, *loUp, fs.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "localcp relay: %v\n", err)
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() > 0 {
			return ee.ExitCode()
		}
		return 1
	}
	return 0
}

func runRelay(pairs []Pair, loUp bool, command []string) error {
	if loUp {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("cannot bring the loopback interface up: %w", err)
		}
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()

	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}()
	for _, p := range pairs {
		n, a, _ := splitAddr(p.Listen)
		if n == "unix" {
			_ = os.Remove(a) // a stale socket from an earlier run
		}
		ln, err := net.Listen(n, a)
		if err != nil {
			return fmt.Errorf("cannot listen on %s: %w", p.Listen, err)
		}
		lns = append(lns, ln)
		go serve(ln, p.Dial)
	}
	if len(command) == 0 {
		<-ctx.Done()
		return nil
	}

	cmd := exec.Command(command[0], command[1:]...) //nolint:gosec // the caller names the command to run
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	// The child stops when the relay does, even when the relay is killed.
	// The parent-death signal follows the forking thread, so this
	// goroutine keeps its thread until the relay exits.
	runtime.LockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start %s: %w", command[0], err)
	}
	var waitErr error
	done := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(done) }()
	select {
	case <-done:
		return waitErr
	case <-ctx.Done():
		// Told to stop: wait for the command, however it exits.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-done
		return nil
	}
}

// serve accepts until the listener closes and pipes each connection to dial.
func serve(ln net.Listener, dial string) {
	n, a, _ := splitAddr(dial)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close() //nolint:errcheck // best effort on a finished connection
			u, err := net.Dial(n, a)
			if err != nil {
				fmt.Fprintf(os.Stderr, "localcp relay: cannot dial %s: %v\n", dial, err)
				return
			}
			defer u.Close() //nolint:errcheck // best effort on a finished connection
			pipe(c, u)
		}()
	}
}

// pipe copies both ways until both directions end, passing half-closes on.
func pipe(a, b net.Conn) {
	var wg sync.WaitGroup
	cp := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	wg.Add(2)
	go cp(a, b)
	go cp(b, a)
	wg.Wait()
}

// loopbackUp sets the IFF_UP flag on "lo" of the current network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd) //nolint:errcheck // closing a query socket
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
