// Package warmup ships in the composition function and the capacity provider:
// it keeps executor images warm on a pool's nodes. It is pure: it takes plain
// values and a clock reading, and returns plain values and typed objects, so a
// composition function gathers the inputs, calls it, and applies what it
// returns.
//
// # The warm set
//
// Set computes which images a pool wants warm: its cached images, plus the
// executor image of every attached QueryService when auto-collection is on.
// References are normalized (Normalize) so one image written two ways is
// warmed once, and each image records why it is wanted (its Sources).
//
// # Retention
//
// An image that leaves the set is not forgotten at once: a QueryService that
// is redeployed or briefly detached would otherwise pay a cold pull. Retain
// keeps its DaemonSet, stamped with AnnotationUnusedSince, until the pool's
// retention has passed, and tells the caller when to run again (RequeueAfter)
// so the drop happens on time. The stamp lives on the DaemonSet, which the
// caller reads back (ParseObserved) on its next run; an image wanted again
// loses it. The clock is an argument; nothing here reads one.
//
// # Warmup DaemonSets
//
// There is one DaemonSet per image and pool, named DaemonSetName, selecting
// the pool's nodes and tolerating the pool taint. Its pods pull the image
// without running anything the image holds, and need no shell in it:
//
//	volume  warm      emptyDir, mounted at /burstpool in the init containers
//	init    install   helper image: /warm install /burstpool/noop
//	                  (the static helper, cmd/warm, copies itself)
//	init    pull      the image to warm: /burstpool/noop
//	                  (the copy, run under the name noop, exits 0 at once)
//	main    pause     helper image: /warm pause
//	                  (blocks until SIGTERM, so the pod stays Running)
//
// Starting the pull container makes the kubelet pull the image
// (IfNotPresent), so a Ready pod means the image is on its node. The image
// need only be pullable for the node's platform: its entrypoint, shell,
// user and libraries are never used, because the command is the static
// helper from the volume. While the pod runs, the image is in use by a
// (terminated) container of a live pod, which keeps the kubelet's image
// garbage collection from removing it.
//
// Every container requests and is limited to 5m CPU and 16Mi memory, so the
// pods barely count when Karpenter sizes a node and are Guaranteed. They run
// as user and group 65532 with a read-only root, no capabilities, no
// privilege escalation and the runtime's default seccomp profile; the pod
// mounts no service-account token. Updates replace all pods at once
// (maxUnavailable 100%), and pods stop within seconds.
//
// # Status
//
// CachedImage turns a kept entry and its observed DaemonSet into the Pool
// status entry: Ready when every pool node runs a ready warmup pod, Pending
// with counts and what to check otherwise.
package warmup
