package objects

import ()

// aksNodeClass is the spec of a karpenter.azure.com/v1beta1 AKSNodeClass.
func aksNodeClass(a NodeClassArgs) map[string]any {
	az := a.Config.Azure
	spec := map[string]any{
		"imageFamily": az.ImageFamily,
		"tags":        map[string]any{"e6data-pool": a.Pool},
	}
	if az.VNETSubnetID != "" {
		spec["vnetSubnetID"] = az.VNETSubnetID
	}
	if az.OSDiskSizeGB > 0 {
		spec["osDiskSizeGB"] = int64(az.OSDiskSizeGB)
	}
	// AKS itself reserves memory and evicts at 750Mi, as the model
	// assumes; maxPods is the cluster's (its network plugin's default)
	// unless the settings name one.
	if az.MaxPods > 0 {
		spec["maxPods"] = int64(az.MaxPods)
	}
	return spec
}
