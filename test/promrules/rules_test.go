package promrules

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// examplePath is the PrometheusRule burstpool ships as an example.
var examplePath = filepath.Join("..", "..", "examples", "monitoring", "prometheusrule.yaml")

// ruleFile returns the rule groups of a PrometheusRule (its spec.groups)
// as a Prometheus rule file, which is what the Prometheus Operator writes
// for Prometheus to load.
func ruleFile(prometheusRule []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(prometheusRule, &doc); err != nil {
		return nil, fmt.Errorf("cannot read the PrometheusRule: %w", err)
	}
	if len(doc.Content) != 1 {
		return nil, errors.New("the PrometheusRule is not one YAML document")
	}
	groups := field(field(doc.Content[0], "spec"), "groups")
	if groups == nil {
		return nil, errors.New("the PrometheusRule has no spec.groups")
	}
	file := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "groups"}, groups}}
	return yaml.Marshal(file)
}

// field is the value of key in the mapping n; nil when there is none.
func field(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// check loads a rule file as `promtool check rules --lint=duplicate-rules`
// does (prometheus v0.316.0 cmd/promtool/main.go, checkRules and
// checkRuleGroups): rulefmt.Parse with unknown fields refused and the
// PromQL parser's default options, then the duplicate-rules lint. Names
// are validated by the legacy scheme, stricter than promtool's UTF-8
// default, so that the rules load on Prometheus before 3.0 too and on a
// server that keeps metric_name_validation_scheme: legacy. It returns
// every error.
func check(file []byte) []error {
	groups, errs := rulefmt.Parse(file, false, model.LegacyValidation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		return errs
	}
	return duplicates(groups)
}

// duplicates is promtool's duplicate-rules lint (checkDuplicates): two
// rules of the same name with the same labels (their group's and their
// own) record or alert on the same series, and one overwrites the other.
func duplicates(groups *rulefmt.RuleGroups) []error {
	seen := map[string]string{}
	var errs []error
	for _, g := range groups.Groups {
		for i, r := range g.Rules {
			name := r.Alert + r.Record
			labels := maps.Clone(g.Labels)
			if labels == nil {
				labels = map[string]string{}
			}
			maps.Copy(labels, r.Labels)
			var key strings.Builder
			key.WriteString(name)
			for _, k := range slices.Sorted(maps.Keys(labels)) {
				fmt.Fprintf(&key, "\xff%s=%s", k, labels[k])
			}
			where := fmt.Sprintf("group %q, rule %d", g.Name, i+1)
			if first, ok := seen[key.String()]; ok {
				errs = append(errs, fmt.Errorf("%s, %q: duplicate rule: %s has the same name and labels", where, name, first))
				continue
			}
			seen[key.String()] = where
		}
	}
	return errs
}

// TestExamplePrometheusRule loads the example PrometheusRule's rules into
// Prometheus's rule checker and fails on every error it reports.
func TestExamplePrometheusRule(t *testing.T) {
	raw, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	file, err := ruleFile(raw)
	if err != nil {
		t.Fatalf("%s: %v", examplePath, err)
	}
	for _, err := range check(file) {
		t.Errorf("%s: %v", examplePath, err)
	}
}

// TestCheckFindsBrokenRules shows that the checker refuses what Prometheus
// would refuse to load: each case is a PrometheusRule with one fault.
func TestCheckFindsBrokenRules(t *testing.T) {
	// rule wraps one group's rules into a PrometheusRule.
	rule := func(rules string) string {
		return `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: broken
spec:
  groups:
    - name: broken.alerts
      rules:
` + rules
	}
	const good = `        - alert: BurstpoolExecutorsOverdue
          expr: max by (pool, pool_namespace) (burstpool_pool_overdue_executors) > 0
          for: 2m
          labels:
            severity: critical
          annotations:
            summary: Executors of pool {{ $labels.pool_namespace }}/{{ $labels.pool }} wait at the gate.
`
	cases := map[string]struct {
		reason string
		in     string
		// want holds, in order, a part of each error the checker reports.
		want []string
	}{
		"Valid": {
			reason: "A well-formed alert loads.",
			in:     rule(good),
		},
		"InvalidExpression": {
			reason: "An expression PromQL cannot parse (a grouping left open) is refused.",
			in: rule(`        - alert: BurstpoolExecutorsOverdue
          expr: max by (pool, pool_namespace (burstpool_pool_overdue_executors) > 0
`),
			want: []string{`"BurstpoolExecutorsOverdue": could not parse expression`},
		},
		"UnknownFunction": {
			reason: "An expression that calls a function PromQL does not have is refused.",
			in: rule(`        - alert: BurstpoolExecutorsOverdue
          expr: maximum(burstpool_pool_overdue_executors) > 0
`),
			want: []string{"unknown function with name \"maximum\""},
		},
		"DuplicateLabel": {
			reason: "A label given twice is refused (YAML keys are unique); rulefmt reads the file twice, and says so twice.",
			in: rule(`        - alert: BurstpoolExecutorsOverdue
          expr: burstpool_pool_overdue_executors > 0
          labels:
            severity: critical
            severity: warning
`),
			want: []string{`mapping key "severity" already defined`, `mapping key "severity" already defined`},
		},
		"InvalidLabelName": {
			reason: "A label name outside [a-zA-Z_][a-zA-Z0-9_]* is refused.",
			in: rule(`        - alert: BurstpoolExecutorsOverdue
          expr: burstpool_pool_overdue_executors > 0
          labels:
            severity-level: critical
`),
			want: []string{"invalid label name: severity-level"},
		},
		"InvalidTemplate": {
			reason: "An annotation whose template does not parse is refused.",
			in: rule(`        - alert: BurstpoolExecutorsOverdue
          expr: burstpool_pool_overdue_executors > 0
          annotations:
            summary: Pool {{ $labels.pool
`),
			want: []string{`annotation "summary"`},
		},
		"UnknownField": {
			reason: "A field Prometheus does not know (a misspelt for) is refused.",
			in: rule(`        - alert: BurstpoolExecutorsOverdue
          expr: burstpool_pool_overdue_executors > 0
          for_: 2m
`),
			want: []string{"field for_ not found"},
		},
		"DuplicateRule": {
			reason: "The same alert twice with the same labels is refused, as promtool's duplicate-rules lint does.",
			in:     rule(good + good),
			want:   []string{`group "broken.alerts", rule 2, "BurstpoolExecutorsOverdue": duplicate rule`},
		},
		"NoGroups": {
			reason: "A PrometheusRule without spec.groups holds no rules to load.",
			in:     "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nspec: {}\n",
			want:   []string{"no spec.groups"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			file, err := ruleFile([]byte(tc.in))
			if err != nil {
				got = append(got, err.Error())
			} else {
				for _, err := range check(file) {
					got = append(got, err.Error())
				}
			}
			ok := len(got) == len(tc.want)
			for i := 0; ok && i < len(got); i++ {
				ok = strings.Contains(got[i], tc.want[i])
			}
			if !ok {
				t.Errorf("%s\nerrors:\n%s\nwant one each containing:\n%s", tc.reason, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
