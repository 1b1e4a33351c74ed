package decision

import (
	"fmt"
	"strings"

	"github.com/burstpool/burstpool/internal/sizing"
)

// autoModeRefuses says why EKS Auto Mode never launches it, "" when it
// does: Auto Mode launches only types with more than 1 vCPU, and no nano,
// micro or small size.
func autoModeRefuses(it sizing.InstanceType) string {
	size := it.Size
	if i := strings.LastIndex(it.Name, "."); i >= 0 {
		size = it.Name[i+1:]
	}
	switch {
	case it.CPU.CmpInt64(1) <= 0:
		return fmt.Sprintf("it has %s vCPU and EKS Auto Mode launches only types with more than 1", it.CPU.String())
	case size == "nano" || size == "micro" || size == "small":
		return fmt.Sprintf("EKS Auto Mode launches no %s size", size)
	}
	return ""
}
