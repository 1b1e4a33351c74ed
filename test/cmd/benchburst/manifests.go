package main

// coldNodePool is a Karpenter NodePool (with its KWOKNodeClass) of one
// instance type whose nodes carry a label the cold executors select: how a
// cluster without burstpool gives executors their own nodes.
const coldNodePool = `apiVersion: karpenter.kwok.sh/v1alpha1
kind: KWOKNodeClass
metadata: {name: %[1]s}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: %[1]s}
spec:
  template:
    metadata:
      labels: {%[2]s: %[1]s}
    spec:
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: %[1]s}
      expireAfter: Never
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [%[3]s]}
        - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 10m
`

// queryService is a QueryService whose executors burst onto a pool.
const queryService = `apiVersion: e6data.io/v1alpha1
kind: QueryService
metadata:
  name: %[1]s
  namespace: %[2]s
  labels: {e6data.io/pool: %[3]s}
spec:
  executor:
    image: %[4]s
    replicas: 1
    resources: {cpu: "%[5]s", memory: %[6]s}
    instanceType: %[7]s
    poolRef: {name: %[8]s, namespace: %[9]s}
`

// pool is a Pool of one instance type, one executor per node, that keeps
// minExecutors slots and its QueryService's image warm.
const pool = `apiVersion: e6data.io/v1alpha1
kind: Pool
metadata:
  name: %[1]s
  namespace: %[2]s
spec:
  minExecutors: %[3]d
  maxExecutors: %[4]d
  executorsPerNode: 1
  instanceConfig: {instanceType: %[5]s}
  imageConfig: {autoCollectImages: true}
  allowedQueryServices:
    - {name: %[6]s, namespace: %[7]s}
`
