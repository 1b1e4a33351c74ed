// Package objects builds the objects a pool is made of: arguments in,
// unstructured objects out. It decides nothing: which objects a pool
// needs, and with what arguments, is the function's to decide; here each
// builder only renders its arguments.
//
// The files, one per kind of object:
//
//   - object.go: New starts every object; Identity and WithIdentity are
//     the labels that tell one pool's objects and nodes from another's;
//     Scheduling is where the pool's own pods go.
//   - names.go: the composed-resource names (Composed*), the name suffixes
//     (Suffix*) and the bounded, stable names of long-named objects.
//   - karpenter.go: the Karpenter NodePool (requirements, taints,
//     disruption budgets, node lifespan, within EKS Auto Mode's rules).
//   - nodeclass.go: the NodeClass of each provider and its kubelet;
//     aws.go (EC2NodeClass, EKS Auto Mode's NodeClass), gcp.go
//     (GCENodeClass) and azure.go (AKSNodeClass) hold each cloud's spec.
//   - awsiam.go: an AWS pool's node IAM role, its policy attachments, its
//     EKS access entry and the ClusterUsages that keep them.
//   - workloads.go: the placeholder PriorityClass and the node agents'
//     PriorityClass, the placeholder Deployment, the CapacityBuffer and its
//     PodTemplate, and the storage agent DaemonSet.
//   - capacity.go: the PoolCapacity managed resource, built from the
//     capacity API's types (apis/capacity/v1alpha1) that its provider
//     decodes, and the Pool's unauthorized-executor policies.
//   - admission.go: the ValidatingAdmissionPolicy and binding that keep
//     unattached QueryServices' executors off the pool's nodes.
//
// Package objects imports no decision of the function and writes no
// response; test/layout checks both.
package objects
