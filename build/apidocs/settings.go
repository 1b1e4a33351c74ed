package apidocs

// SettingsIntro opens the settings reference: where the settings live and
// which ones each cloud needs.
const SettingsIntro = "The pool-compose function reads the cluster's settings from an " +
	"EnvironmentConfig (`apiextensions.crossplane.io/v1beta1`) named `burstpool` " +
	"(the Composition's `environmentConfig` input field can name another one, or select " +
	"several by label, merged in name order). Its `data` holds the fields below; each " +
	"one set there wins over the Composition's input, and each one set nowhere takes " +
	"its default. Objects merge field by field; lists and values replace.\n\n" +
	"Settings a pool needs before anything is composed (missing, the pool is Pending " +
	"with a message naming the field, and nothing it already has is changed):\n\n" +
	"- Karpenter on AWS: `data.aws.role` (or `data.aws.instanceProfile`), and " +
	"`data.clusterName` unless both `data.aws.subnetSelectorTerms` and " +
	"`data.aws.securityGroupSelectorTerms` are set.\n" +
	"- EKS Auto Mode: `data.eksAutoMode.role`, and `data.clusterName` unless both " +
	"selector terms are set.\n" +
	"- LKE and DOKS pools that burstpool creates (`manageNodePool`): " +
	"`data.provisioning.clusterId`, unless the Pool sets `spec.provisioning.clusterId`.\n\n" +
	"A value that is invalid or not a setting makes pools Pending the same way. " +
	"Installation: [install.md](install.md)."
