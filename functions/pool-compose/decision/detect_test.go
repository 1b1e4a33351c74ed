package decision

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// crdSet is the detection CRDs a cluster serves.
func crdSet(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

func TestDetect(t *testing.T) {
	crds := crdSet
	type want struct {
		Cloud, Method, Source string
		Namespaced, Problem   bool
	}
	cases := map[string]struct {
		reason string
		spec   *poolv1alpha1.Provisioning
		def    *v1beta1.Provisioning
		crds   map[string]bool
		want   want
	}{
		"AWSKarpenter":        {"The EC2NodeClass CRD means Karpenter on AWS.", nil, nil, crds(CRDNodePool, CRDEC2NodeClass), want{cloudAWS, methodKarpenter, "CRD " + CRDEC2NodeClass, false, false}},
		"EKSAutoMode":         {"Only EKS Auto Mode's NodeClass CRD means EKS Auto Mode.", nil, nil, crds(CRDNodePool, CRDEKSNodeClass), want{cloudAWS, methodEKSAutoMode, "CRD " + CRDEKSNodeClass, false, false}},
		"KarpenterBeatsAuto":  {"Self-managed Karpenter is preferred to EKS Auto Mode when both are installed.", nil, nil, crds(CRDNodePool, CRDEKSNodeClass, CRDEC2NodeClass), want{cloudAWS, methodKarpenter, "CRD " + CRDEC2NodeClass, false, false}},
		"GCP":                 {"The GCENodeClass CRD means Karpenter on GCP.", nil, nil, crds(CRDNodePool, CRDGCENodeClass), want{cloudGCP, methodKarpenter, "CRD " + CRDGCENodeClass, false, false}},
		"Azure":               {"The AKSNodeClass CRD means Karpenter on Azure.", nil, nil, crds(CRDNodePool, CRDAKSNodeClass), want{cloudAzure, methodKarpenter, "CRD " + CRDAKSNodeClass, false, false}},
		"KWOK":                {"The KWOKNodeClass CRD means Karpenter's test cloud.", nil, nil, crds(CRDNodePool, CRDKWOKNodeClass), want{cloudKWOK, methodKarpenter, "CRD " + CRDKWOKNodeClass, false, false}},
		"CoreWeave":           {"CoreWeave's NodePool CRD means CoreWeave.", nil, nil, crds(CRDCoreWeave), want{cloudCoreWeave, methodCoreWeave, "CRD " + CRDCoreWeave, false, false}},
		"Linode":              {"The LKE provider's CRD means Linode.", nil, nil, crds(CRDLKE), want{cloudLinode, methodLKE, "CRD " + CRDLKE, false, false}},
		"DOKS":                {"The DOKS provider's CRD means DigitalOcean.", nil, nil, crds(CRDDOKS), want{cloudDigitalOcean, methodDOKS, "CRD " + CRDDOKS, false, false}},
		"DOKSNamespaced":      {"Only the namespaced DOKS CRD means namespaced node pools.", nil, nil, crds(CRDDOKSNamespace), want{cloudDigitalOcean, methodDOKS, "CRD " + CRDDOKSNamespace, true, false}},
		"Nothing":             {"No provisioning CRD means existing nodes.", nil, nil, crds(), want{cloudOnPrem, methodStatic, "no node provisioning CRD installed", false, false}},
		"NodePoolWithoutCRDs": {"Karpenter's NodePool CRD without a NodeClass CRD is not a usable Karpenter.", nil, nil, crds(CRDNodePool), want{cloudOnPrem, methodStatic, "no node provisioning CRD installed", false, false}},
		"SpecOverrides": {"spec.provisioning wins over the CRDs, and the method implies the cloud.",
			&poolv1alpha1.Provisioning{Method: methodLKE}, nil, crds(CRDNodePool, CRDKWOKNodeClass), want{cloudLinode, methodLKE, "spec.provisioning", false, false}},
		"InputDefault": {"The input's provisioning applies when the spec has none.",
			nil, &v1beta1.Provisioning{Cloud: cloudAWS}, crds(CRDNodePool, CRDEC2NodeClass), want{cloudAWS, methodKarpenter, "function input", false, false}},
		"SpecBeatsInput": {"spec.provisioning wins over the input.",
			&poolv1alpha1.Provisioning{Method: methodStatic}, &v1beta1.Provisioning{Cloud: cloudAWS}, crds(), want{cloudOnPrem, methodStatic, "spec.provisioning", false, false}},
		"KarpenterMissing": {"Asking for Karpenter without its CRDs is a problem to report.",
			&poolv1alpha1.Provisioning{Cloud: cloudGCP, Method: methodKarpenter}, nil, crds(), want{cloudGCP, methodKarpenter, "spec.provisioning", false, true}},
		"MethodCloudMismatch": {"A method that needs another cloud is a problem to report.",
			&poolv1alpha1.Provisioning{Cloud: cloudAWS, Method: methodLKE}, nil, crds(), want{cloudAWS, methodLKE, "spec.provisioning", false, true}},
		"KarpenterOnLinode": {"Karpenter has no NodeClass for Linode.",
			&poolv1alpha1.Provisioning{Cloud: cloudLinode, Method: methodKarpenter}, nil, crds(CRDNodePool), want{cloudLinode, methodKarpenter, "spec.provisioning", false, true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := Detect(tc.spec, &v1beta1.Input{Provisioning: tc.def}, tc.crds)
			got := want{d.Cloud, d.Method, d.Source, d.DOKSNamespaced, d.Problem != ""}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nDetect(...): -want, +got:\n%s\nproblem: %s", tc.reason, diff, d.Problem)
			}
		})
	}
}
