// Package reference tests burstpool against e6data's Pool reference: it knows
// the reference (the contract burstpool answers to, kept outside the repository
// in ../shared/seeds) and the byte-for-byte copies of its section-4 example
// manifests that live in examples/pools/reference.
package reference

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/burstpool/burstpool/test/harness/gomod"
)

// SeedFile is the reference's path relative to the repository root.
const SeedFile = "../shared/seeds/000_3ddc7b902ec9e307.txt"

// CopyDir holds the copies of the section-4 manifests, relative to the
// repository root.
const CopyDir = "examples/pools/reference"

// Seed reads the reference from beside the checkout at root. found is
// false, with no error, only when the folder that holds it is absent (a
// checkout without ../shared), so callers can say that they cannot check
// against it; any other problem is an error.
func Seed(root string) (text string, found bool, err error) {
	path := filepath.Join(root, SeedFile)
	b, err := os.ReadFile(path) //nolint:gosec // the reference beside the checkout
	if err != nil {
		if _, serr := os.Stat(filepath.Dir(path)); errors.Is(serr, fs.ErrNotExist) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("cannot read the reference %s: %w", path, err)
	}
	return string(b), true, nil
}

// SeedForTest reads the reference from beside the checkout the test runs
// in, failing t on any problem but an absent reference folder. Then found is
// false and folder names the folder it looked for, so the caller can say
// what it cannot check.
func SeedForTest(t testing.TB) (text string, found bool, folder string) {
	t.Helper()
	root := gomod.RootForTest(t)
	text, found, err := Seed(root)
	if err != nil {
		t.Fatal(err)
	}
	return text, found, filepath.Dir(filepath.Join(root, SeedFile))
}

// Manifest is one example manifest of the reference's section 4.
type Manifest struct {
	// Section is the heading's number, for example 4.1.
	Section string
	// Heading is the heading's title, for example Basic Burst Pool.
	Heading string
	// File is the copy's file name in CopyDir.
	File string
	// Pool is the metadata.name the manifest creates.
	Pool string
}

// Manifests are the five example manifests of section 4, in order.
var Manifests = []Manifest{
	{Section: "4.1", Heading: "Basic Burst Pool", File: "4.1-basic-burst-pool.yaml", Pool: "burst-pool"},
	{Section: "4.2", Heading: "Explicit Instance Type Pool", File: "4.2-explicit-instance-type-pool.yaml", Pool: "high-memory-pool"},
	{Section: "4.3", Heading: "Non-Karpenter Pool (Linode/DigitalOcean)", File: "4.3-non-karpenter-pool.yaml", Pool: "linode-pool"},
	{Section: "4.4", Heading: "Multi-Executor Per Node Pool", File: "4.4-multi-executor-per-node-pool.yaml", Pool: "shared-node-pool"},
	{Section: "4.5", Heading: "Pool with Explicit Cached Images", File: "4.5-pool-with-explicit-cached-images.yaml", Pool: "prewarmed-pool"},
}

// Path is the copy's path under the repository root.
func (m Manifest) Path(root string) string { return filepath.Join(root, CopyDir, m.File) }

// Read returns the repository's copy of m.
func (m Manifest) Read(root string) ([]byte, error) {
	b, err := os.ReadFile(m.Path(root))
	if err != nil {
		return nil, fmt.Errorf("cannot read the copy of reference manifest %s: %w", m.Section, err)
	}
	return b, nil
}

// Extract returns the manifest under m's heading in the reference text:
// the lines after the heading up to the next numbered heading, without the
// blank lines around them, ending in one newline. The reference shows each
// manifest as a block of its own between two headings.
func Extract(text string, m Manifest) (string, error) {
	return Block(text, m.Section+" "+m.Heading)
}

// Block returns the text under a numbered heading of the reference (for
// example "5.3 Allocations") up to the next numbered heading, without the
// blank lines around it, ending in one newline.
func Block(text, heading string) (string, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	start := -1
	for i, l := range lines {
		if l == heading {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return "", fmt.Errorf("the reference has no heading %q", heading)
	}
	end := len(lines)
	for i := start; i < len(lines); i++ {
		if isHeading(lines[i]) {
			end = i
			break
		}
	}
	block := lines[start:end]
	for len(block) > 0 && strings.TrimSpace(block[0]) == "" {
		block = block[1:]
	}
	for len(block) > 0 && strings.TrimSpace(block[len(block)-1]) == "" {
		block = block[:len(block)-1]
	}
	if len(block) == 0 {
		return "", fmt.Errorf("the reference has nothing under %q", heading)
	}
	return strings.Join(block, "\n") + "\n", nil
}

// isHeading tells whether a line is a numbered heading of the reference
// ("4.2 Explicit Instance Type Pool", "5. Status & Lifecycle").
func isHeading(l string) bool {
	num, title, ok := strings.Cut(l, " ")
	if !ok || title == "" || num == "" || num[0] < '0' || num[0] > '9' {
		return false
	}
	for _, r := range num {
		if (r < '0' || r > '9') && r != '.' {
			return false
		}
	}
	return true
}
