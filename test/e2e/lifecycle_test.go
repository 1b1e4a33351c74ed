package e2e

import "testing"

// TestLifecycle lives through an installation as a platform team does, on
// one plane where Crossplane runs as its Helm chart installs it: docs/
// install.md's Steps (installByDoc), then Upgrade (its Upgrading section,
// to the next release, while pools run and burst: upgradeByDoc), then
// Uninstall (burstpool-aws added, then its Uninstalling section, down to
// nothing of burstpool left: uninstallByDoc). burstpool-aws is added at
// the release the upgrade reached, the installed one when it stopped
// short; the uninstallation runs after a failed upgrade as well and
// checks the same.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	d := installByDoc(t)
	version := d.tag
	t.Run("Upgrade", func(t *testing.T) {
		version = upgradeByDoc(t, d)
	})
	t.Run("Uninstall", func(t *testing.T) {
		uninstallByDoc(t, d, version)
	})
}
