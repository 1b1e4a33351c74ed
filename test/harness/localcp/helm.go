package localcp

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Crossplane's Helm chart, in its module, and the templates of it that a
// Helm-like plane applies: the service accounts of core and of the RBAC
// manager and their ClusterRoles and bindings (the Deployments are the
// local processes).
const (
	crossplaneChart = "cluster/charts/crossplane"
	// CoreServiceAccount and RBACManagerServiceAccount are the accounts
	// the chart runs core and the RBAC manager under, in CrossplaneNS.
	CoreServiceAccount        = "crossplane"
	RBACManagerServiceAccount = "rbac-manager"
	// AllowedProviderPermissions is the ClusterRole the chart passes the
	// RBAC manager as --provider-clusterrole.
	AllowedProviderPermissions = "crossplane:allowed-provider-permissions"
)

var chartRBACTemplates = []string{
	"serviceaccount.yaml",
	"clusterrole.yaml",
	"clusterrolebinding.yaml",
	"rbac-manager-serviceaccount.yaml",
	"rbac-manager-clusterrole.yaml",
	"rbac-manager-clusterrolebinding.yaml",
	"rbac-manager-managed-clusterroles.yaml",
	"rbac-manager-allowed-provider-permissions.yaml",
}

// renderChartRBAC renders the chart's RBAC templates (chartRBACTemplates)
// with its default values.yaml, as `helm install crossplane -n ns` would,
// and returns the YAML documents.
func renderChartRBAC(moduleDir, ns string) ([]byte, error) {
	dir := filepath.Join(moduleDir, filepath.FromSlash(crossplaneChart))
	var values, chart map[string]any
	for f, v := range map[string]*map[string]any{"values.yaml": &values, "Chart.yaml": &chart} {
		b, err := os.ReadFile(filepath.Join(dir, f)) //nolint:gosec // a file of the module cache
		if err != nil {
			return nil, fmt.Errorf("cannot read Crossplane's chart: %w", err)
		}
		if err := yaml.Unmarshal(b, v); err != nil {
			return nil, fmt.Errorf("cannot decode the chart's %s: %w", f, err)
		}
	}
	data := map[string]any{
		"Values":  values,
		"Chart":   map[string]any{"Name": chart["name"], "Version": chart["version"], "AppVersion": chart["appVersion"]},
		"Release": map[string]any{"Name": "crossplane", "Namespace": ns, "Service": "Helm"},
	}
	root := template.New("chart").Option("missingkey=zero")
	root.Funcs(chartFuncs(root))
	helpers, err := os.ReadFile(filepath.Join(dir, "templates", "_helpers.tpl")) //nolint:gosec // a file of the module cache
	if err != nil {
		return nil, err
	}
	if _, err := root.New("_helpers.tpl").Parse(string(helpers)); err != nil {
		return nil, fmt.Errorf("cannot parse the chart's helpers: %w", err)
	}
	var out bytes.Buffer
	for _, f := range chartRBACTemplates {
		b, err := os.ReadFile(filepath.Join(dir, "templates", f)) //nolint:gosec // a file of the module cache
		if err != nil {
			return nil, err
		}
		tpl, err := root.New(f).Parse(string(b))
		if err != nil {
			return nil, fmt.Errorf("cannot parse the chart's %s: %w", f, err)
		}
		out.WriteString("\n---\n")
		if err := tpl.Execute(&out, data); err != nil {
			return nil, fmt.Errorf("cannot render the chart's %s: %w", f, err)
		}
	}
	return out.Bytes(), nil
}

// chartFuncs are the Helm (sprig) functions the chart's RBAC templates use,
// with Helm's semantics.
func chartFuncs(root *template.Template) template.FuncMap {
	indent := func(n int, s string) string {
		pad := strings.Repeat(" ", n)
		return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
	}
	return template.FuncMap{
		"default": func(d any, v ...any) any {
			if len(v) == 0 || v[0] == nil || v[0] == "" || v[0] == false {
				return d
			}
			return v[0]
		},
		"trunc": func(n int, s string) string {
			if len(s) > n {
				return s[:n]
			}
			return s
		},
		"trimSuffix": func(suffix, s string) string { return strings.TrimSuffix(s, suffix) },
		"replace":    func(old, new, s string) string { return strings.ReplaceAll(s, old, new) },
		"indent":     indent,
		"nindent":    func(n int, s string) string { return "\n" + indent(n, s) },
		"quote":      func(v any) string { return fmt.Sprintf("%q", fmt.Sprint(v)) },
		"toYaml": func(v any) (string, error) {
			b, err := yaml.Marshal(v)
			return strings.TrimSuffix(string(b), "\n"), err
		},
		"include": func(name string, data any) (string, error) {
			var b bytes.Buffer
			err := root.ExecuteTemplate(&b, name, data)
			return b.String(), err
		},
	}
}

// accountKubeconfig writes at path a kubeconfig for the API server that
// authenticates as the service account ns/name, with a token from the
// TokenRequest API, as a pod of that account would.
func (u *upper) accountKubeconfig(ctx context.Context, ns, name, path string) error {
	c, err := client.New(u.c.Config, client.Options{})
	if err != nil {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := c.Create(ctx, sa); err != nil && !kerrors.IsAlreadyExists(err) {
		return fmt.Errorf("cannot create service account %s/%s: %w", ns, name, err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](7 * 24 * 3600)}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		return fmt.Errorf("cannot get a token of service account %s/%s: %w", ns, name, err)
	}
	ca, err := os.ReadFile(u.pki.CACert)
	if err != nil {
		return err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: u.c.Config.Host, CertificateAuthorityData: ca}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: name, Namespace: ns}
	kc.CurrentContext = "local"
	return clientcmd.WriteToFile(*kc, path)
}

// helmIdentities applies the chart's service accounts and ClusterRoles and
// returns kubeconfigs of core's and the RBAC manager's accounts.
func (u *upper) helmIdentities(ctx context.Context, moduleDir string) (core, rbac string, err error) {
	docs, err := renderChartRBAC(moduleDir, CrossplaneNS)
	if err != nil {
		return "", "", err
	}
	if err := Apply(ctx, u.c.Config, docs); err != nil {
		return "", "", fmt.Errorf("cannot apply the RBAC of Crossplane's chart: %w", err)
	}
	core, rbac = u.path("crossplane", "core.kubeconfig"), u.path("crossplane", "rbac-manager.kubeconfig")
	if err := os.MkdirAll(filepath.Dir(core), 0o755); err != nil {
		return "", "", err
	}
	if err := u.accountKubeconfig(ctx, CrossplaneNS, CoreServiceAccount, core); err != nil {
		return "", "", err
	}
	return core, rbac, u.accountKubeconfig(ctx, CrossplaneNS, RBACManagerServiceAccount, rbac)
}

// startRBACManager runs `crossplane rbac init` and then `crossplane rbac
// start` with the chart's arguments, as the RBAC manager's account, in a
// network namespace of its own (its metrics server binds every interface).
// It serves no health endpoint out of its pod, so it runs with --debug
// and is ready once its controllers log that their workers started.
func (u *upper) startRBACManager(ctx context.Context, kubeconfig string) error {
	env := []string{"KUBECONFIG=" + kubeconfig, "POD_NAMESPACE=" + CrossplaneNS, "LEADER_ELECTION=false"}
	if err := u.crossplaneRun(ctx, "rbac-init", env, "rbac", "init"); err != nil {
		return err
	}
	p, err := u.startInNetns(netnsComponent{
		name:    "crossplane-rbac-manager",
		path:    u.cfg.Binaries.Crossplane,
		args:    []string{"--debug", "rbac", "start", "--provider-clusterrole=" + AllowedProviderPermissions},
		env:     env,
		forward: []int{u.c.Ports["apiserver"]},
	})
	if err != nil {
		return err
	}
	return u.waitReady(ctx, p, func(context.Context) error {
		b, err := os.ReadFile(p.Log)
		if err != nil {
			return err
		}
		if !bytes.Contains(b, []byte("Starting workers")) {
			return fmt.Errorf("%s has not started its controllers yet", p.Name)
		}
		return nil
	})
}
