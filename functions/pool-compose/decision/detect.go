package decision

import (
	"fmt"
	"slices"

	poolv1alpha1 "github.com/burstpool/burstpool/apis/pool/v1alpha1"
	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// Clouds, the values of spec.provisioning.cloud.
const (
	cloudAWS          = "aws"
	cloudGCP          = "gcp"
	cloudAzure        = "azure"
	cloudLinode       = "linode"
	cloudDigitalOcean = "digitalocean"
	cloudCoreWeave    = "coreweave"
	cloudKWOK         = "kwok"
	cloudOnPrem       = "onprem"
)

// Provisioning methods, the values of spec.provisioning.method.
const (
	methodKarpenter   = "karpenter"
	methodEKSAutoMode = "eks-auto-mode"
	methodLKE         = "lke"
	methodDOKS        = "doks"
	methodCoreWeave   = "coreweave"
	methodNodeGroup   = "node-group"
	methodStatic      = "static"
)

// methods are every provisioning method, in the order messages list them.
var methods = []string{methodKarpenter, methodEKSAutoMode, methodLKE, methodDOKS, methodCoreWeave, methodNodeGroup, methodStatic}

// The CustomResourceDefinitions whose presence reveals how a cluster
// provisions nodes. The function asks Crossplane for each by name.
const (
	CRDNodePool      = "nodepools.karpenter.sh"
	CRDEC2NodeClass  = "ec2nodeclasses.karpenter.k8s.aws"
	CRDEKSNodeClass  = "nodeclasses.eks.amazonaws.com"
	CRDGCENodeClass  = "gcenodeclasses.karpenter.k8s.gcp"
	CRDAKSNodeClass  = "aksnodeclasses.karpenter.azure.com"
	CRDKWOKNodeClass = "kwoknodeclasses.karpenter.kwok.sh"
	CRDCoreWeave     = "nodepools.compute.coreweave.com"
	CRDLKE           = "nodepools.lke.linode.upbound.io"
	CRDDOKS          = "nodepools.kubernetes.digitalocean.crossplane.io"
	CRDDOKSNamespace = "nodepools.kubernetes.digitalocean.m.crossplane.io"
	CRDEKSNodeGroup  = "nodegroups.eks.aws.upbound.io"
	CRDGKENodePool   = "nodepools.container.gcp.upbound.io"
	CRDAKSNodePool   = "kubernetesclusternodepools.containerservice.azure.upbound.io"
)

// DetectionCRDs are every CRD the function reads by name: those detection
// looks at, in the order it prefers them, then CapacityBuffer's, which
// decides what holds the warm slots (buffer.go).
var DetectionCRDs = []string{
	CRDNodePool, CRDEC2NodeClass, CRDEKSNodeClass, CRDGCENodeClass, CRDAKSNodeClass, CRDKWOKNodeClass,
	CRDCoreWeave, CRDLKE, CRDDOKS, CRDDOKSNamespace,
	CRDEKSNodeGroup, CRDGKENodePool, CRDAKSNodePool, CRDCapacityBuffer,
}

// Detection is how a pool's nodes are provisioned, and why.
type Detection struct {
	Cloud  string
	Method string
	// Source says how the decision was made: spec.provisioning, the
	// function input, or the CRD that revealed it.
	Source string
	// DOKSNamespaced is true when DigitalOcean node pools are the
	// namespaced managed resource.
	DOKSNamespaced bool
	// Problem is set when the method cannot work on this cluster (for
	// example karpenter without the NodePool CRD); it is a message a person
	// can act on.
	Problem string
}

// cloudOfMethod is the cloud a method implies, or "" when it does not.
func cloudOfMethod(method string) string {
	switch method {
	case methodEKSAutoMode:
		return cloudAWS
	case methodLKE:
		return cloudLinode
	case methodDOKS:
		return cloudDigitalOcean
	case methodCoreWeave:
		return cloudCoreWeave
	}
	return ""
}

// karpenterCloud is the cloud whose Karpenter NodeClass CRD is installed.
func karpenterCloud(crds map[string]bool) (cloud, crd string) {
	for _, c := range []struct{ crd, cloud string }{
		{CRDEC2NodeClass, cloudAWS},
		{CRDGCENodeClass, cloudGCP},
		{CRDAKSNodeClass, cloudAzure},
		{CRDKWOKNodeClass, cloudKWOK},
	} {
		if crds[c.crd] {
			return c.cloud, c.crd
		}
	}
	return "", ""
}

// methodOfCloud is the method a cloud uses when only the cloud is known.
func methodOfCloud(cloud string, crds map[string]bool) string {
	switch cloud {
	case cloudAWS:
		if !crds[CRDEC2NodeClass] && crds[CRDEKSNodeClass] {
			return methodEKSAutoMode
		}
		return methodKarpenter
	case cloudGCP, cloudAzure, cloudKWOK:
		return methodKarpenter
	case cloudLinode:
		return methodLKE
	case cloudDigitalOcean:
		return methodDOKS
	case cloudCoreWeave:
		return methodCoreWeave
	}
	return methodStatic
}

// Detect decides the pool's cloud and method: spec.provisioning first, then
// the settings' provisioning defaults, then the installed CRDs. Self-managed
// Karpenter (a NodeClass CRD of its own) is preferred to EKS Auto Mode when
// both are installed, then the node groups of the settings' nodeGroups
// whose provider CRD is installed (nodeGroupCloud), then CoreWeave, LKE and
// DOKS; a cluster with none of them uses existing nodes (static).
func Detect(spec *poolv1alpha1.Provisioning, cfg *v1beta1.Input, crds map[string]bool) Detection {
	var def *v1beta1.Provisioning
	if cfg != nil {
		def = cfg.Provisioning
	}
	var d Detection
	switch {
	case spec != nil && (spec.Cloud != "" || spec.Method != ""):
		d = Detection{Cloud: spec.Cloud, Method: spec.Method, Source: "spec.provisioning"}
	case def != nil && (def.Cloud != "" || def.Method != ""):
		d = Detection{Cloud: def.Cloud, Method: def.Method, Source: "function input"}
	}
	if def != nil {
		d.DOKSNamespaced = def.DOKSNamespaced
	}
	if d.Source != "" {
		if d.Cloud == "" {
			d.Cloud = cloudOfMethod(d.Method)
		}
		if d.Cloud == "" && d.Method == methodNodeGroup {
			d.Cloud, _ = nodeGroupCloud(cfg, crds)
		}
		if d.Cloud == "" { // method karpenter or static without a cloud
			if c, _ := karpenterCloud(crds); c != "" && d.Method == methodKarpenter {
				d.Cloud = c
			} else {
				d.Cloud = cloudOnPrem
			}
		}
		if d.Method == "" {
			d.Method = methodOfCloud(d.Cloud, crds)
		}
	} else {
		d = detectFromCRDs(cfg, crds)
	}
	if d.Method == methodDOKS && !crds[CRDDOKS] && crds[CRDDOKSNamespace] {
		d.DOKSNamespaced = true
	}
	d.Problem = methodProblem(d, crds)
	return d
}

// detectFromCRDs decides from the installed CRDs and the settings'
// nodeGroups.
func detectFromCRDs(cfg *v1beta1.Input, crds map[string]bool) Detection {
	if crds[CRDNodePool] {
		if c, crd := karpenterCloud(crds); c != "" {
			return Detection{Cloud: c, Method: methodKarpenter, Source: "CRD " + crd}
		}
		if crds[CRDEKSNodeClass] {
			return Detection{Cloud: cloudAWS, Method: methodEKSAutoMode, Source: "CRD " + CRDEKSNodeClass}
		}
	}
	ngCloud, ngWhy := nodeGroupCloud(cfg, crds)
	switch {
	case ngCloud != "" && crds[nodeGroupCRD(ngCloud)]:
		return Detection{Cloud: ngCloud, Method: methodNodeGroup, Source: ngWhy}
	case crds[CRDCoreWeave]:
		return Detection{Cloud: cloudCoreWeave, Method: methodCoreWeave, Source: "CRD " + CRDCoreWeave}
	case crds[CRDLKE]:
		return Detection{Cloud: cloudLinode, Method: methodLKE, Source: "CRD " + CRDLKE}
	case crds[CRDDOKS]:
		return Detection{Cloud: cloudDigitalOcean, Method: methodDOKS, Source: "CRD " + CRDDOKS}
	case crds[CRDDOKSNamespace]:
		return Detection{Cloud: cloudDigitalOcean, Method: methodDOKS, Source: "CRD " + CRDDOKSNamespace, DOKSNamespaced: true}
	}
	src := "no node provisioning CRD installed"
	if ngWhy != "" {
		src += "; " + ngWhy
	}
	return Detection{Cloud: cloudOnPrem, Method: methodStatic, Source: src}
}

// nodeClassCRD is the NodeClass CRD a Karpenter cloud needs.
func nodeClassCRD(cloud, method string) string {
	if method == methodEKSAutoMode {
		return CRDEKSNodeClass
	}
	switch cloud {
	case cloudAWS:
		return CRDEC2NodeClass
	case cloudGCP:
		return CRDGCENodeClass
	case cloudAzure:
		return CRDAKSNodeClass
	case cloudKWOK:
		return CRDKWOKNodeClass
	}
	return ""
}

// methodProblem says why d cannot work, or "".
func methodProblem(d Detection, crds map[string]bool) string {
	switch d.Method {
	case methodKarpenter, methodEKSAutoMode:
		if d.Method == methodEKSAutoMode && d.Cloud != cloudAWS {
			return fmt.Sprintf("method eks-auto-mode needs cloud aws, not %q: fix spec.provisioning", d.Cloud)
		}
		crd := nodeClassCRD(d.Cloud, d.Method)
		if crd == "" {
			return fmt.Sprintf("Karpenter has no NodeClass for cloud %q: use method %s, or set spec.provisioning.method to static with a nodeSelector", d.Cloud, methodOfCloud(d.Cloud, crds))
		}
		var missing []string
		for _, c := range []string{CRDNodePool, crd} {
			if !crds[c] {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("method %s needs the CRDs %v, which are not installed: install Karpenter for %s, or set spec.provisioning", d.Method, missing, d.Cloud)
		}
	case methodNodeGroup:
		return nodeGroupProblem(d.Cloud, crds)
	case methodLKE, methodDOKS, methodCoreWeave, methodStatic:
		if c := cloudOfMethod(d.Method); c != "" && d.Cloud != c {
			return fmt.Sprintf("method %s needs cloud %s, not %q: fix spec.provisioning", d.Method, c, d.Cloud)
		}
	default:
		return fmt.Sprintf("unknown provisioning method %q: use one of %v", d.Method, methods)
	}
	return ""
}

// isKarpenter tells whether a method provisions nodes with a Karpenter
// NodePool.
func isKarpenter(method string) bool {
	return slices.Contains([]string{methodKarpenter, methodEKSAutoMode}, method)
}

// nodeGroupCRD is the provider CRD a cloud's node groups need.
func nodeGroupCRD(cloud string) string {
	switch cloud {
	case cloudAWS:
		return CRDEKSNodeGroup
	case cloudGCP:
		return CRDGKENodePool
	case cloudAzure:
		return CRDAKSNodePool
	}
	return ""
}

// nodeGroupBlock is the settings block of a cloud's node groups, and
// whether it is set.
func nodeGroupBlock(cloud string, ng *v1beta1.NodeGroups) (string, bool) {
	if ng == nil {
		ng = &v1beta1.NodeGroups{}
	}
	switch cloud {
	case cloudAWS:
		return "nodeGroups.eks", ng.EKS != nil
	case cloudGCP:
		return "nodeGroups.gke", ng.GKE != nil
	case cloudAzure:
		return "nodeGroups.aks", ng.AKS != nil
	}
	return "nodeGroups", false
}

// nodeGroupCloud is the cloud whose node groups the settings configure
// completely (nodeGroupSettings finds nothing missing), preferring one
// whose provider CRD is installed, and why, for Detection.Source: which
// block, and which CRD serves it or is missing. "" when no block is
// complete.
func nodeGroupCloud(cfg *v1beta1.Input, crds map[string]bool) (cloud, why string) {
	if cfg == nil {
		return "", ""
	}
	for _, c := range []string{cloudAWS, cloudGCP, cloudAzure} {
		block, set := nodeGroupBlock(c, cfg.NodeGroups)
		if !set || len(nodeGroupSettings(c, cfg)) > 0 {
			continue
		}
		if crds[nodeGroupCRD(c)] {
			return c, fmt.Sprintf("settings %s and CRD %s, without Karpenter", block, nodeGroupCRD(c))
		}
		if cloud == "" {
			cloud, why = c, fmt.Sprintf("settings %s is set but CRD %s is not installed", block, nodeGroupCRD(c))
		}
	}
	return cloud, why
}

// nodeGroupProblem says why the node-group method cannot work for cloud,
// or "".
func nodeGroupProblem(cloud string, crds map[string]bool) string {
	crd := nodeGroupCRD(cloud)
	switch {
	case crd == "":
		return fmt.Sprintf("method node-group needs cloud aws, gcp or azure, not %q: set the settings' nodeGroups.eks, nodeGroups.gke or nodeGroups.aks, or fix spec.provisioning", cloud)
	case !crds[crd]:
		return fmt.Sprintf("method node-group on %s needs the CRD %s, which is not installed: install the provider family's package (docs/install.md, \"Node groups under the Cluster Autoscaler\")", cloud, crd)
	}
	return ""
}

// nodeGroupSettings are the settings a cloud's node groups miss.
func nodeGroupSettings(cloud string, c *v1beta1.Input) []SettingError {
	block, set := nodeGroupBlock(cloud, c.NodeGroups)
	if !set {
		return []SettingError{{Path: block, Message: "is required for method node-group on " + cloud + ": the cluster, network and node identity of the pool's node groups"}}
	}
	var errs []SettingError
	need := func(ok bool, path, msg string) {
		if !ok {
			errs = append(errs, SettingError{Path: path, Message: msg})
		}
	}
	switch cloud {
	case cloudAWS:
		e := c.NodeGroups.EKS
		need(e.ClusterName != "" || c.ClusterName != "", block+".clusterName", "is required (or clusterName): the EKS cluster pool node groups join")
		need(e.Region != "", block+".region", "is required: the EKS cluster's region")
		need(len(e.SubnetIDs) > 0, block+".subnetIDs", "is required: the subnets pool nodes run in")
		need(e.NodeRoleARN != "", block+".nodeRoleARN", "is required: the IAM role ARN pool nodes run with")
	case cloudGCP:
		g := c.NodeGroups.GKE
		need(g.Cluster != "" || c.ClusterName != "", block+".cluster", "is required (or clusterName): the GKE cluster pool node pools join")
		need(g.Location != "", block+".location", "is required: the GKE cluster's region or zone")
	case cloudAzure:
		need(c.NodeGroups.AKS.KubernetesClusterID != "", block+".kubernetesClusterID", "is required: the AKS cluster's Azure resource ID")
	}
	return errs
}
