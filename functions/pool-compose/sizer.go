package main

import (
	"fmt"

	"github.com/burstpool/burstpool/functions/pool-compose/input/v1beta1"
)

// catalogSizer sizes pools from the sizing catalog with the input's
// overrides.
func catalogSizer(overrides []v1beta1.InstanceType) func(SizeInput) (SizeResult, error) {
	return func(in SizeInput) (SizeResult, error) {
		return SizeResult{}, fmt.Errorf("no sizing catalog for cloud %q", in.Cloud)
	}
}
