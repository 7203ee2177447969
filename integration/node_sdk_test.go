package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/switchboard-voice/switchboard/internal/testkit"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// nodeTestdata holds the Node apps and the package files pinning the SDK versions.
const nodeTestdata = "testdata/node"

// npmInstallTimeout bounds the one-time `npm ci` of the SDKs.
const npmInstallTimeout = 5 * time.Minute

var (
	nodeOnce    sync.Once
	nodeModules string // NODE_PATH for the apps
	nodeBinary  string
	nodeErr     error
)

// requireNodeSDKs returns the node binary and a node_modules directory holding
// @jambonz/node-client-ws and @jambonz/node-client, installing them from npm on first
// use. The install is cached under os.TempDir, keyed by a hash of package.json and
// package-lock.json, so later runs (and other packages' runs) skip npm entirely.
// Without node or npm, or when the install fails, the test is skipped — or failed
// when CI=true, where the Node tests must run.
func requireNodeSDKs(t *testing.T) (node, modules string) {
	t.Helper()
	nodeOnce.Do(func() { nodeBinary, nodeModules, nodeErr = installNodePackages(nodeTestdata, "switchboard-node-sdk-") })
	if nodeErr != nil {
		testkit.SkipMissing(t, "Node.js", fmt.Sprintf("the jambonz SDKs: %v (needs Node.js 18+ and npm with access to the npm registry)", nodeErr))
	}
	return nodeBinary, nodeModules
}

// installNodePackages installs the npm packages that dir's package.json and
// package-lock.json pin into a cache under os.TempDir named prefix + a hash of both
// files, and returns the node binary and that cache's node_modules.
func installNodePackages(dir, prefix string) (node, modules string, err error) {
	node, err = exec.LookPath("node")
	if err != nil {
		return "", "", fmt.Errorf("node not found on PATH: %w", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", "", fmt.Errorf("npm not found on PATH: %w", err)
	}
	pkg, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", "", err
	}
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return "", "", err
	}
	sum := sha256.New()
	sum.Write(pkg)
	sum.Write([]byte{0})
	sum.Write(lock)
	cache := filepath.Join(os.TempDir(), prefix+hex.EncodeToString(sum.Sum(nil))[:16])
	modules = filepath.Join(cache, "node_modules")
	marker := filepath.Join(cache, ".installed")
	if _, err := os.Stat(marker); err == nil {
		return node, modules, nil
	}

	// Install into a fresh directory and rename it into place, so a concurrent or
	// interrupted run never sees a half-installed cache.
	tmp, err := os.MkdirTemp(os.TempDir(), prefix+"*.partial")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	for name, data := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return "", "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), npmInstallTimeout)
	defer cancel()
	// --ignore-scripts: the only install scripts are optional native speed-ups of ws.
	cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = tmp
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("npm ci of %s failed: %w\n%s", dir, err, out.Bytes())
	}
	if err := os.WriteFile(filepath.Join(tmp, ".installed"), nil, 0o644); err != nil {
		return "", "", err
	}
	if err := os.Rename(tmp, cache); err != nil {
		// Another run finished first; its cache is as good as ours.
		if _, statErr := os.Stat(marker); statErr != nil {
			return "", "", errors.Join(err, statErr)
		}
	}
	return node, modules, nil
}
