package decision

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// Settings are the function input with the cluster's EnvironmentConfigs
// merged over it, and where each value came from, so a problem names the
// object and field to fix.
type Settings struct {
	Config *v1beta1.Input
	// envs are the data of the EnvironmentConfigs read, in merge order.
	envs []NamedData
	// target is the EnvironmentConfig to edit: the last one read, else the
	// one the input selects.
	target string
	// input is the function input as sent, to tell which settings it set.
	input map[string]any
}

type NamedData struct {
	Name string
	Data map[string]any
}

// SettingError is a setting that is wrong or missing, by its path in an
// EnvironmentConfig's data (and in the function input).
type SettingError struct {
	Path string
	// Message says what is wrong; it does not repeat Path.
	Message string
}

// where names the object a setting at path should be fixed in: the
// EnvironmentConfig that set it, else the function input when the input set
// it, else the EnvironmentConfig the cluster's settings belong in.
//
// A path into a list entry (tenancy.namespaces[0].methods) is fixed where
// the entry is set when the field itself is not.
func (s Settings) where(path string) string {
	for p := path; p != ""; p = entryOf(p) {
		for i := len(s.envs) - 1; i >= 0; i-- {
			if has(s.envs[i].Data, p) {
				return fmt.Sprintf("EnvironmentConfig %s field data.%s", s.envs[i].Name, path)
			}
		}
		if has(s.input, p) {
			return fmt.Sprintf("the Composition's function input field %s", path)
		}
	}
	return fmt.Sprintf("EnvironmentConfig %s field data.%s", s.target, path)
}

// entryOf is the list entry a path leads into (a.b[1] of a.b[1].c), or ""
// when it leads into none.
func entryOf(path string) string {
	i := strings.LastIndex(path, "]")
	if i < 0 || i == len(path)-1 {
		i = strings.LastIndex(path[:max(i, 0)], "]")
	}
	if i < 0 {
		return ""
	}
	return path[:i+1]
}

// Problem formats setting errors as one message a person can act on.
func (s Settings) Problem(errs []SettingError) string {
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, fmt.Sprintf("%s %s", s.where(e.Path), e.Message))
	}
	return strings.Join(msgs, "; ")
}

// has tells whether the dotted path is set in m.
func has(m map[string]any, path string) bool {
	var v any = m
	for _, k := range strings.Split(path, ".") {
		k, idx, indexed := strings.Cut(k, "[")
		mm, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = mm[k]; !ok {
			return false
		}
		if !indexed {
			continue
		}
		l, isList := v.([]any)
		i, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
		if !isList || err != nil || i < 0 || i >= len(l) {
			return false
		}
		v = l[i]
	}
	return true
}

// settingsRead are the names of the EnvironmentConfigs whose data was
// merged, in merge order.
func (s Settings) settingsRead() []string {
	out := make([]string, 0, len(s.envs))
	for _, e := range s.envs {
		out = append(out, e.Name)
	}
	return out
}
