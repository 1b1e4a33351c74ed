package sizing

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

// poolOverhead is a pool's usual DaemonSets: one warmup pod (two init
// containers then a pause container) and a storage agent. Its effective
// request is 10m + 200m CPU and 32Mi + 512Mi memory.
var poolOverhead = Overhead{DaemonSets: []PodRequests{
	{
		Init:       []Resources{res("10m", "32Mi"), res("10m", "32Mi")},
		Containers: []Resources{res("10m", "16Mi")},
	},
	{Containers: []Resources{res("200m", "512Mi")}},
}}

func res(cpu, mem string) Resources {
	return Resources{CPU: resource.MustParse(cpu), Memory: resource.MustParse(mem)}
}

func mustType(t *testing.T, c Cloud, name string) InstanceType {
	t.Helper()
	cat, err := LoadCatalog(c)
	if err != nil {
		t.Fatal(err)
	}
	it, ok := cat.Lookup(name)
	if !ok {
		t.Fatalf("%s is not in the %s catalog", name, c)
	}
	return it
}

func TestAllocatable(t *testing.T) {
	type args struct {
		cloud    Cloud
		it       InstanceType
		overhead Overhead
	}
	cases := map[string]struct {
		reason string
		args   args
		want   Resources
	}{
		"AWSr7gd4xlarge": {
			reason: "16 vCPU less 60+10+10+12x2.5 = 110m; 131072Mi less 64Mi CMA (arm64) = 131008Mi, less ceil(7.5%) = 9826Mi VM overhead, 11x110+255 = 1465Mi kube-reserved (maxPods 110, below its 234 ENI-limited pods) and 100Mi eviction.",
			args:   args{cloud: CloudAWS, it: mustType(t, CloudAWS, "r7gd.4xlarge")},
			want:   res("15890m", "119617Mi"),
		},
		"AWSr7gd16xlarge": {
			reason: "64 vCPU less 230m; 524288Mi less 64Mi CMA, 39317Mi VM overhead, 1465Mi and 100Mi.",
			args:   args{cloud: CloudAWS, it: mustType(t, CloudAWS, "r7gd.16xlarge")},
			want:   res("63770m", "483342Mi"),
		},
		"AWSr7gd4xlargeWithPoolDaemonSets": {
			reason: "The pool's DaemonSets take 210m and 544Mi more.",
			args:   args{cloud: CloudAWS, it: mustType(t, CloudAWS, "r7gd.4xlarge"), overhead: poolOverhead},
			want:   res("15680m", "119073Mi"),
		},
		"AWSm7gMedium": {
			reason: "1 vCPU less 60m; 4096Mi less 64Mi CMA, 303Mi VM overhead, 11x8+255 = 343Mi kube-reserved (its network holds 8 pods: 2 ENIs x (4-1) + 2) and 100Mi.",
			args:   args{cloud: CloudAWS, it: mustType(t, CloudAWS, "m7g.medium")},
			want:   res("940m", "3286Mi"),
		},
		"GCPn2Highmem8": {
			reason: "8 vCPU less 90m kube-reserved and 100m for kube-proxy; 68719476736 bytes less the GCP provider's 7% truncated (4810363371), 1024+819+819+2949 = 5611Mi kube-reserved (each bracket truncated) and 100Mi eviction.",
			args:   args{cloud: CloudGCP, it: mustType(t, CloudGCP, "n2-highmem-8")},
			want:   res("7810m", "57920695829"),
		},
		"AzureE16dsv5": {
			reason: "AKS brackets: 16 vCPU less 60+40+2x20+12x10 = 260m; 137438953472 bytes less 7.5% rounded up (10307921511), 1024 x 9.32 = 9543Mi (truncated) and a 750Mi eviction threshold.",
			args:   args{cloud: CloudAzure, it: mustType(t, CloudAzure, "Standard_E16ds_v5")},
			want:   res("15740m", "116338039193"),
		},
		"DigitalOceanSmallest": {
			reason: "1Gi is not under 1Gi, so the brackets apply: 1024Mi less 77Mi VM overhead, 256Mi and 100Mi.",
			args:   args{cloud: CloudDigitalOcean, it: mustType(t, CloudDigitalOcean, "s-1vcpu-1gb")},
			want:   res("940m", "591Mi"),
		},
		"GCPUnderOneGi": {
			reason: "Under 1Gi GKE reserves a flat 255Mi: 536870912 bytes less 7% (37580963), 255Mi and 100Mi; 1 vCPU less 60m and 100m for kube-proxy.",
			args:   args{cloud: CloudGCP, it: InstanceType{Name: "tiny", CPU: resource.MustParse("1"), Memory: resource.MustParse("512Mi")}},
			want:   res("840m", "127045469"),
		},
		"KWOK": {
			reason: "The kwok provider reserves 100m and 10Mi and nothing else.",
			args:   args{cloud: CloudKWOK, it: mustType(t, CloudKWOK, "m-4x-amd64-linux")},
			want:   res("3900m", "32758Mi"),
		},
		"OnPremisesUsesTheBrackets": {
			reason: "A cloud without a model of its own (on-premises) gets the GKE brackets and a fractional CPU count works: 3500m less 60+10+7.5 (rounded up to 8) = 78m.",
			args:   args{cloud: Cloud("onprem"), it: InstanceType{Name: "rack-a", CPU: resource.MustParse("3500m"), Memory: resource.MustParse("16Gi")}},
			want:   res("3422m", "12392Mi"),
		},
		"NeverBelowZero": {
			reason: "DaemonSets larger than the node leave nothing, not a negative amount.",
			args: args{cloud: CloudAWS, it: mustType(t, CloudAWS, "c7g.medium"), overhead: Overhead{DaemonSets: []PodRequests{
				{Containers: []Resources{res("2", "8Gi")}},
			}}},
			want: res("0", "0"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Allocatable(tc.args.cloud, tc.args.it, tc.args.overhead)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nAllocatable(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestNodeAllocatable(t *testing.T) {
	got := NodeAllocatable(CloudAWS, mustType(t, CloudAWS, "r7gd.4xlarge"))
	if diff := cmp.Diff(res("15890m", "119617Mi"), got); diff != "" {
		t.Errorf("NodeAllocatable is Allocatable without pool DaemonSets: -want, +got:\n%s", diff)
	}
}

func TestPodRequestsEffective(t *testing.T) {
	cases := map[string]struct {
		reason string
		pod    PodRequests
		want   Resources
	}{
		"Empty": {
			reason: "A pod with no requests takes nothing.",
			want:   res("0", "0"),
		},
		"SumOfContainers": {
			reason: "Regular containers run together, so their requests add up.",
			pod:    PodRequests{Containers: []Resources{res("100m", "256Mi"), res("200m", "256Mi")}},
			want:   res("300m", "512Mi"),
		},
		"LargestInitPerResource": {
			reason: "Init containers run one at a time: the largest counts, per resource, when it beats the containers' sum.",
			pod: PodRequests{
				Init:       []Resources{res("500m", "1Gi"), res("100m", "2Gi")},
				Containers: []Resources{res("100m", "256Mi"), res("200m", "256Mi")},
			},
			want: res("500m", "2Gi"),
		},
		"NegativeCountsAsZero": {
			reason: "A negative request cannot give resources back.",
			pod:    PodRequests{Containers: []Resources{res("-1", "-1Gi"), res("100m", "1Mi")}},
			want:   res("100m", "1Mi"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.pod.Effective()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nEffective(): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	cases := map[string]struct {
		reason string
		got    string
		want   string
	}{
		"CPUWhole":        {reason: "Whole cores have no decimals.", got: FormatCPU(64000), want: "64"},
		"CPUHundredths":   {reason: "Two decimals at most.", got: FormatCPU(63770), want: "63.77"},
		"CPUTenths":       {reason: "A trailing zero is dropped.", got: FormatCPU(15500), want: "15.5"},
		"CPURoundsDown":   {reason: "Allocatable is never overstated.", got: FormatCPU(15899), want: "15.89"},
		"MemoryWholeGi":   {reason: "Whole Gi have no decimal.", got: FormatMemory(16 << 30), want: "16Gi"},
		"MemoryTenth":     {reason: "One decimal, rounded down.", got: FormatMemory(483401 << 20), want: "472Gi"},
		"MemoryDecimal":   {reason: "One decimal.", got: FormatMemory(240374 << 20), want: "234.7Gi"},
		"MemoryUnderOnGi": {reason: "Under 1Gi in Mi.", got: FormatMemory(591 << 20), want: "591Mi"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
