// Package conformance is Kubernetes' own e2e suite, limited to the API's specs: the sig-api-machinery,
// sig-apps and sig-network specs compiled into one e2e.test that cellfed's conformance suite runs against
// one plain kube-apiserver and through the cell router (e2e/test/conformance.e2e.spec.ts). The specs that
// need nodes are left out by that suite's list, not here.
package conformance

import (
	"context"
	"flag"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/utils/net"

	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/framework/config"
	"k8s.io/kubernetes/test/e2e/framework/testfiles"
	e2etestingmanifests "k8s.io/kubernetes/test/e2e/testing-manifests"
	testfixtures "k8s.io/kubernetes/test/fixtures"

	// The specs: registered with ginkgo when their packages load.
	_ "k8s.io/kubernetes/test/e2e/apimachinery"
	_ "k8s.io/kubernetes/test/e2e/apps"
	_ "k8s.io/kubernetes/test/e2e/network"

	// The framework's own set-up, as Kubernetes' e2e.test loads it.
	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/metrics/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"
)

func TestMain(m *testing.M) {
	config.CopyFlags(config.Flags, flag.CommandLine)
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	// Manifests the specs read (CRD and webhook fixtures) come from the binary, not a checkout.
	testfiles.AddFileSource(e2etestingmanifests.GetE2ETestingManifestsFS())
	testfiles.AddFileSource(testfixtures.GetTestFixturesFS())
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

// Kubernetes' e2e.test waits for schedulable nodes and system pods before any spec; the API's specs need
// neither, and cellfed's cells run no nodes. What its suite set-up gives every spec is the cluster's IP
// family, read from default/kubernetes as it does.
var _ = ginkgo.SynchronizedBeforeSuite(func(ctx context.Context) []byte { return nil },
	func(ctx context.Context, _ []byte) {
		client, err := framework.LoadClientset()
		framework.ExpectNoError(err, "loading the client")
		service, err := client.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
		framework.ExpectNoError(err, "reading default/kubernetes")
		framework.TestContext.IPFamily = "ipv4"
		if utilnet.IsIPv6String(service.Spec.ClusterIP) {
			framework.TestContext.IPFamily = "ipv6"
		}
	})

func TestE2E(t *testing.T) {
	gomega.RegisterFailHandler(framework.Fail)
	suiteConfig, reporterConfig := framework.CreateGinkgoConfig()
	ginkgo.RunSpecs(t, "cellfed conformance", suiteConfig, reporterConfig)
}
