// Package warmweek tests: it replays a week of executor demand against the
// warm policies (make bench-warm). A deterministic generator writes the
// demand trace shipped in examples/warm (Generate, Shipped); Replay runs a
// trace through the decisions the capacity provider and the composition
// function make (package internal/warmpolicy: Schedule.At,
// History.Observe and Recommend, Decide; warm slots are the warm level less
// the executors on the pool's nodes, as the function's placeholders are)
// on a simulated cloud whose node launch and image pull take the times of
// make bench-burst (package test/burst), and measures what the warm slots
// cost and how fast executors run.
package warmweek
