package objects

import ()

// DefaultGCPImageFamily is the GCENodeClass image family a pool gets when
// the settings name none.
const DefaultGCPImageFamily = "ContainerOptimizedOS"

// gceNodeClass is the spec of a karpenter.k8s.gcp/v1alpha1 GCENodeClass.
func gceNodeClass(a NodeClassArgs) map[string]any {
	gcp := a.Config.GCP
	// The GCENodeClass's CEL: a family needs a channel or a version, and
	// channel is only supported for family ContainerOptimizedOS; Ubuntu
	// images follow the latest version.
	term := map[string]any{"family": gcp.ImageFamily, "version": "latest"}
	if gcp.ImageFamily == DefaultGCPImageFamily {
		term = map[string]any{"family": gcp.ImageFamily, "channel": gcp.ImageChannel}
	}
	spec := map[string]any{"imageSelectorTerms": []any{term}}
	if gcp.ServiceAccount != "" {
		spec["serviceAccount"] = gcp.ServiceAccount
	}
	if k := kubeletConfig(a.Kubelet, false); len(k) > 0 {
		spec["kubeletConfiguration"] = k
	}
	return spec
}
