// Package observed reads the objects Crossplane sends the function: the
// observed composite, composed and required resources, as protobuf Structs.
//
// The function reads a few fields of many objects (a pool may have a
// thousand QueryServices), so it reads them straight from the Struct rather
// than converting each object to JSON and decoding it. Every reader here
// returns the zero value for a field that is absent or of another type.
//
// Package observed imports no other package of the function.
package observed
