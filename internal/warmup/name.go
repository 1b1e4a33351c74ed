package warmup

import "strings"

// maxNameLen is the longest DNS-1123 label.
const maxNameLen = 63

// nameInfix separates the pool from the image hash in a DaemonSet name.
const nameInfix = "-warmup-"

// poolHashLen is the number of hex digits of the pool hash that marks a pool
// name DaemonSetName had to shorten or rewrite.
const poolHashLen = 5

// DaemonSetName returns the name of the warmup DaemonSet of image ref in a
// pool: "{pool}-warmup-{Hash(ref)}". The result is always a valid DNS-1123
// label of at most 63 characters. When the pool name is not a DNS-1123 label
// or is too long, it is lowercased, other characters become '-', and it is
// cut to fit, ending in a short hash of the full pool name so distinct pools
// keep distinct names; the image hash is always kept whole.
func DaemonSetName(pool, ref string) string {
	suffix := nameInfix + Hash(ref)
	p := poolPart(pool, maxNameLen-len(suffix))
	if p == "" {
		return strings.TrimPrefix(suffix, "-")
	}
	return p + suffix
}

// ResourceName returns the composed-resource name a composition function
// gives the warmup DaemonSet of image ref: "warmup-{Hash(ref)}". It is unique
// within one pool's composite, which is all a composed-resource name needs.
func ResourceName(ref string) string {
	return strings.TrimPrefix(nameInfix, "-") + Hash(ref)
}

// poolPart returns pool as a DNS-1123 label prefix of at most max characters
// that neither starts nor ends with '-'.
func poolPart(pool string, max int) string {
	if pool == "" {
		return ""
	}
	if isLabel(pool) && len(pool) <= max {
		return pool
	}
	b := []byte(strings.ToLower(pool))
	for i, c := range b {
		if !isAlnum(c) {
			b[i] = '-'
		}
	}
	s := strings.Trim(string(b), "-")
	tag := hashOf(pool)[:poolHashLen]
	if keep := max - len(tag) - 1; len(s) > keep {
		s = strings.TrimRight(s[:keep], "-")
	}
	if s == "" {
		return tag
	}
	return s + "-" + tag
}

// isLabel tells whether s is a DNS-1123 label of any length.
func isLabel(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}
