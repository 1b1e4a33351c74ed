package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/burstpool/burstpool/test/harness/gomod"
	"github.com/burstpool/burstpool/test/reference"
)

// kubectlPath builds (once) and returns the real kubectl binary.
var kubectlPath = sync.OnceValues(func() (string, error) {
	root, err := gomod.Root()
	if err != nil {
		return "", err
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "hack", "tool.sh"), "kubectl") //nolint:gosec // the repository's own script
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("`hack/tool.sh kubectl` failed: %w\n%s", err, errb.String())
	}
	return strings.TrimSpace(out.String()), nil
})

// kubectl runs the real kubectl with args against kubeconfig and returns
// its standard output.
func kubectl(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	bin, err := kubectlPath()
	if err != nil {
		return "", fmt.Errorf("cannot build kubectl (run `hack/tool.sh kubectl`): %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, kubectlTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...) //nolint:gosec // the pinned kubectl
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// refCommand is a command of the reference's section 7, as written there,
// with the arguments a namespaced object needs added.
type refCommand struct {
	// line is the command as the reference writes it, pipes included.
	line string
	// extra are arguments added to it (-n e6-pools).
	extra []string
}

// args splits the kubectl part of the line (before any pipe) into
// arguments as a shell would: single quotes group and are removed.
func (c refCommand) args() []string {
	cmd, _, _ := strings.Cut(c.line, " | ")
	var (
		out   []string
		cur   strings.Builder
		quote bool
		has   bool
	)
	for _, r := range cmd {
		switch {
		case r == '\'':
			quote, has = !quote, true
		case r == ' ' && !quote:
			if has {
				out = append(out, cur.String())
				cur.Reset()
				has = false
			}
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if has {
		out = append(out, cur.String())
	}
	return append(out[1:], c.extra...) // out[0] is "kubectl"
}

// run checks that the reference holds the line (when the reference is
// beside the checkout), runs it with the real kubectl and returns the
// output; a " | jq" tail is applied as a JSON parse by the caller.
func (c refCommand) run(t *testing.T, ctx context.Context, kubeconfig string) string {
	t.Helper()
	checkInReference(t, c.line)
	out, err := kubectl(ctx, kubeconfig, c.args()...)
	if err != nil {
		t.Fatalf("%s: %v", c.line, err)
	}
	return out
}

// checkInReference fails t when the reference does not write line as a
// command of its own.
func checkInReference(t *testing.T, line string) {
	t.Helper()
	text, found, _ := reference.SeedForTest(t)
	if !found {
		t.Logf("cannot check %q against the reference: it is not beside this checkout", line)
		return
	}
	for _, l := range strings.Split(text, "\n") {
		// Commands are written alone on a line, or after a "$ " prompt
		// above their output.
		if strings.TrimPrefix(strings.TrimSpace(l), "$ ") == line {
			return
		}
	}
	t.Errorf("the reference has no command %q", line)
}

// jsonValues parses output the way jq reads its input: a stream of JSON
// values (kubectl's jsonpath prints one per match, space separated).
func jsonValues(out string) ([]any, error) {
	dec := json.NewDecoder(strings.NewReader(out))
	var vals []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return vals, nil
		}
		if err != nil {
			return nil, fmt.Errorf("not JSON (as jq would read it): %w: %q", err, out)
		}
		vals = append(vals, v)
	}
}

// table parses kubectl's table output into a header and rows of fields.
func table(out string) (header []string, rows [][]string) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 {
		return nil, nil
	}
	header = strings.Fields(lines[0])
	for _, l := range lines[1:] {
		rows = append(rows, strings.Fields(l))
	}
	return header, rows
}
