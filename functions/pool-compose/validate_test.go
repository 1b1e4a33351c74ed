package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/burstpool/burstpool/functions/pool-compose/decision"
)

// TestValidate: every problem of a spec that bypassed the schema is one
// error at the field the user must change, so the Fatal message and any
// caller can point at it (k8s.io/apimachinery/pkg/util/validation/field).
func TestValidate(t *testing.T) {
	const allowed = "  maxExecutors: 4\n  allowedQueryServices: [{name: a}]\n"
	cases := map[string]struct {
		reason string
		pool   string
		spec   string
		want   []string
	}{
		"Valid":                    {reason: "A pool with a name, a maximum and the QueryServices it allows is valid.", pool: "burst", spec: allowed},
		"NoName":                   {reason: "A pool without a name has nothing to name its objects after.", pool: "", spec: allowed, want: []string{"FieldValueRequired metadata.name"}},
		"NameTooLong":              {reason: "Pool nodes and pods carry the name as a label value, at most 63 characters.", pool: strings.Repeat("p", 64), spec: allowed, want: []string{"FieldValueInvalid metadata.name"}},
		"MaxExecutorsZero":         {reason: "A pool runs at least one executor.", pool: "burst", spec: "  maxExecutors: 0\n  allowedQueryServices: [{name: a}]\n", want: []string{"FieldValueInvalid spec.maxExecutors"}},
		"MinAboveMax":              {reason: "minExecutors lies between 0 and maxExecutors.", pool: "burst", spec: allowed + "  minExecutors: 5\n", want: []string{"FieldValueInvalid spec.minExecutors"}},
		"NegativePerNode":          {reason: "executorsPerNode is at least 1 when set.", pool: "burst", spec: allowed + "  executorsPerNode: -1\n", want: []string{"FieldValueInvalid spec.executorsPerNode"}},
		"InvalidSelector":          {reason: "A selector that cannot be evaluated leaves which QueryServices attach unknown.", pool: "burst", spec: "  maxExecutors: 4\n  queryServiceSelector: {matchExpressions: [{key: a, operator: Bogus}]}\n", want: []string{"FieldValueInvalid spec.queryServiceSelector"}},
		"SelectorPinsNothing":      {reason: "A selector that pins no label to one value would fetch every QueryService in the cluster.", pool: "burst", spec: "  maxExecutors: 4\n  queryServiceSelector: {matchExpressions: [{key: e6data.io/burst, operator: Exists}]}\n", want: []string{"FieldValueInvalid spec.queryServiceSelector"}},
		"NothingAllowed":           {reason: "A pool says which QueryServices may use it.", pool: "burst", spec: "  maxExecutors: 4\n", want: []string{"FieldValueRequired spec.allowedQueryServices"}},
		"BadRetention":             {reason: "The retention is a duration.", pool: "burst", spec: allowed + "  imageConfig: {unusedImageRetention: soon}\n", want: []string{"FieldValueInvalid spec.imageConfig.unusedImageRetention"}},
		"StorageAgentWithoutImage": {reason: "An enabled storage agent runs an image.", pool: "burst", spec: allowed + "  storageAgent: {enabled: true}\n", want: []string{"FieldValueRequired spec.storageAgent.image"}},
		"TypeOutsideFamily":        {reason: "The Pool API's CEL rule: the type belongs to the family.", pool: "burst", spec: allowed + "  instanceConfig: {instanceType: m5.large, instanceFamily: r7gd}\n", want: []string{"FieldValueInvalid spec.instanceConfig.instanceType"}},
		"TolerationWithoutKey":     {reason: "A toleration without a key must use operator Exists (core/v1 Toleration); the second one is wrong.", pool: "burst", spec: allowed + "  tolerations: [{operator: Exists}, {operator: Equal, value: x}]\n", want: []string{"FieldValueInvalid spec.tolerations[1].operator"}},
		"SeveralAtOnce":            {reason: "Every problem is reported, in the order of the spec's fields.", pool: "", spec: "  maxExecutors: 0\n", want: []string{"FieldValueRequired metadata.name", "FieldValueInvalid spec.maxExecutors", "FieldValueRequired spec.allowedQueryServices"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range decision.Validate(tc.pool, decodeSpec(t, tc.spec)) {
				got = append(got, string(e.Type)+" "+e.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nValidate(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
