// Command capd-manager runs the in-memory backend of CAPD, Cluster API's
// development infrastructure provider, for the sandbox fleet: the
// DevCluster, DevMachine and DevMachineTemplate reconcilers and their
// webhooks, from CAPD's public packages, and nothing of its Docker backend.
//
// CAPD's own main (sigs.k8s.io/cluster-api/test/infrastructure/docker) needs
// a Docker daemon, serves the fake workload apiservers on every interface
// at fixed ports (20000 and up, and a debug server on 19000), and runs the
// Docker* reconcilers beside the Dev* ones. This one needs no Docker, and
// serves the workload apiservers on --inmemory-host (loopback by default),
// at the ports the caller chooses. (The listeners bind that host only with
// the patch in hack/tools/capi/patches: upstream listens on ":port".)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"syscall"
	"time"

	dockersystem "github.com/moby/moby/api/types/system"
	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/logs"
	logsv1 "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/core/setup"
	"sigs.k8s.io/cluster-api/feature"
	"sigs.k8s.io/cluster-api/test/infrastructure/container"
	infrav1 "sigs.k8s.io/cluster-api/test/infrastructure/docker/api/v1beta2"
	"sigs.k8s.io/cluster-api/test/infrastructure/docker/controllers"
	infrawebhooks "sigs.k8s.io/cluster-api/test/infrastructure/docker/webhooks"
	cloudv1 "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/cloud/api/v1alpha1"
	inmemoryruntime "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/runtime"
	inmemoryserver "sigs.k8s.io/cluster-api/test/infrastructure/inmemory/pkg/server"
	"sigs.k8s.io/cluster-api/util/flags"
)

const controllerName = "cluster-api-docker-controller-manager"

var setupLog = ctrl.Log.WithName("setup")

func main() {
	if err := run(); err != nil {
		setupLog.Error(err, "capd-manager failed")
		os.Exit(1)
	}
}

func run() error {
	fs := pflag.CommandLine
	logOptions := logs.NewOptions()
	logsv1.AddFlags(logOptions, fs)
	var (
		managerOptions                         flags.ManagerOptions
		webhookHost, webhookCertDir            string
		webhookPort                            int
		healthAddr, inMemoryHost               string
		minPort, maxPort, debugPort            int32
		syncPeriod                             time.Duration
		restQPS                                float32
		restBurst                              int
		machineConcurrency, clusterConcurrency int
	)
	fs.StringVar(&webhookHost, "webhook-host", "127.0.0.1", "The address the webhook server binds to.")
	fs.IntVar(&webhookPort, "webhook-port", 9443, "The port the webhook server binds to.")
	fs.StringVar(&webhookCertDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs/", "The directory holding the webhook server's tls.crt and tls.key.")
	fs.StringVar(&healthAddr, "health-addr", "127.0.0.1:9440", "The address the health endpoint binds to.")
	fs.StringVar(&inMemoryHost, "inmemory-host", "127.0.0.1", "The address the in-memory workload clusters' apiservers and the debug server bind to, and the control plane endpoints name.")
	fs.Int32Var(&minPort, "inmemory-min-port", inmemoryserver.DefaultMinPort, "The first port of the in-memory workload clusters' apiservers, one per cluster.")
	fs.Int32Var(&maxPort, "inmemory-max-port", inmemoryserver.DefaultMaxPort, "The last port of the in-memory workload clusters' apiservers.")
	fs.Int32Var(&debugPort, "inmemory-debug-port", inmemoryserver.DefaultDebugPort, "The port of the in-memory backend's debug server.")
	fs.DurationVar(&syncPeriod, "sync-period", 10*time.Minute, "The minimum interval at which watched resources are reconciled.")
	fs.Float32Var(&restQPS, "kube-api-qps", 100, "Maximum queries per second to the management cluster's apiserver.")
	fs.IntVar(&restBurst, "kube-api-burst", 200, "Maximum burst of queries to the management cluster's apiserver.")
	fs.IntVar(&machineConcurrency, "devmachine-concurrency", 50, "Number of DevMachines to process simultaneously.")
	fs.IntVar(&clusterConcurrency, "devcluster-concurrency", 10, "Number of DevClusters (and DevMachineTemplates) to process simultaneously.")
	flags.AddManagerOptions(fs, &managerOptions)
	feature.MutableGates.AddFlag(fs)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	fs.AddGoFlagSet(flag.CommandLine)
	pflag.Parse()
	if err := logsv1.ValidateAndApply(logOptions, nil); err != nil {
		return err
	}
	ctrl.SetLogger(klog.Background())

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, infrav1.AddToScheme, clusterv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	// The scheme of the in-memory workload clusters' objects, as CAPD's.
	inMemoryScheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		cloudv1.AddToScheme, corev1.AddToScheme, appsv1.AddToScheme, rbacv1.AddToScheme,
		storagev1.AddToScheme, apiextensionsv1.AddToScheme, policyv1.AddToScheme,
	} {
		if err := add(inMemoryScheme); err != nil {
			return err
		}
	}

	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	restConfig.QPS, restConfig.Burst = restQPS, restBurst
	tlsOptions, metricsOptions, err := flags.GetManagerOptions(managerOptions)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Controller: config.Controller{UsePriorityQueue: ptr.To(feature.Gates.Enabled(feature.PriorityQueue))},
		Scheme:     scheme,
		// One manager per management cluster, run by the sandbox: no
		// leader election.
		HealthProbeBindAddress: healthAddr,
		Metrics:                *metricsOptions,
		Cache:                  setup.ManagerCacheOptions(scheme, controllerName, "", syncPeriod),
		Client:                 setup.ManagerClientOptions(),
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: webhookHost, Port: webhookPort, CertDir: webhookCertDir, TLSOpts: tlsOptions,
		}),
	})
	if err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()

	secretCachingClient, err := setup.CreateSecretCachingClient(mgr)
	if err != nil {
		return err
	}
	clusterCache, err := clustercache.SetupWithManager(ctx, mgr, clustercache.Options{
		SecretClient: secretCachingClient,
		Cache:        setup.ClusterCacheCacheOptions(),
		Client:       setup.ClusterCacheClientOptions(controllerName, 20, 30),
	}, controller.Options{MaxConcurrentReconciles: clusterConcurrency})
	if err != nil {
		return err
	}

	inMemoryManager := inmemoryruntime.NewManager(inMemoryScheme)
	if err := inMemoryManager.Start(ctx); err != nil {
		return err
	}
	mux, err := inmemoryserver.NewWorkloadClustersMux(inMemoryManager, inMemoryHost,
		inmemoryserver.CustomPorts{MinPort: minPort, MaxPort: maxPort, DebugPort: debugPort})
	if err != nil {
		return err
	}

	runtimeClient := noContainerRuntime{}
	if err := (&controllers.DevClusterReconciler{
		Client: mgr.GetClient(), ContainerRuntime: runtimeClient, InMemoryManager: inMemoryManager, APIServerMux: mux,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: clusterConcurrency}); err != nil {
		return fmt.Errorf("DevCluster controller: %w", err)
	}
	if err := (&controllers.DevMachineReconciler{
		Client: mgr.GetClient(), ContainerRuntime: runtimeClient, ClusterCache: clusterCache, InMemoryManager: inMemoryManager, APIServerMux: mux,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: machineConcurrency}); err != nil {
		return fmt.Errorf("DevMachine controller: %w", err)
	}
	if err := (&controllers.DevMachineTemplateReconciler{
		Client: mgr.GetClient(), ContainerRuntime: runtimeClient,
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: clusterConcurrency}); err != nil {
		return fmt.Errorf("DevMachineTemplate controller: %w", err)
	}
	for name, w := range map[string]interface{ SetupWebhookWithManager(ctrl.Manager) error }{
		"DevCluster": &infrawebhooks.DevCluster{}, "DevMachine": &infrawebhooks.DevMachine{}, "DevMachineTemplate": &infrawebhooks.DevMachineTemplate{},
	} {
		if err := w.SetupWebhookWithManager(mgr); err != nil {
			return fmt.Errorf("%s webhook: %w", name, err)
		}
	}
	setupLog.Info("Starting manager", "inMemoryHost", inMemoryHost, "minPort", minPort, "maxPort", maxPort, "debugPort", debugPort)
	return mgr.Start(ctx)
}

// errNoContainerRuntime is what the in-memory backend's reconcilers get if
// they ever ask for a container: this manager has none.
var errNoContainerRuntime = errors.New("capd-manager runs CAPD's in-memory backend only: no container runtime")

// noContainerRuntime stands in for CAPD's Docker client, which the Dev*
// reconcilers insist on even for the in-memory backend. Only
// DevMachineTemplate's capacity (its status, for the autoscaler) asks
// anything of it: this machine's CPUs and memory, as CAPD reports Docker's.
type noContainerRuntime struct{}

func (noContainerRuntime) GetSystemInfo(context.Context) (dockersystem.Info, error) {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return dockersystem.Info{}, err
	}
	return dockersystem.Info{NCPU: goruntime.NumCPU(), MemTotal: int64(si.Totalram) * int64(si.Unit)}, nil //nolint:gosec // memory sizes fit
}

func (noContainerRuntime) SaveContainerImage(context.Context, string, string) error {
	return errNoContainerRuntime
}

func (noContainerRuntime) PullContainerImageIfNotExists(context.Context, string) error {
	return errNoContainerRuntime
}
func (noContainerRuntime) PullContainerImage(context.Context, string) error {
	return errNoContainerRuntime
}
func (noContainerRuntime) ImageExistsLocally(context.Context, string) (bool, error) {
	return false, errNoContainerRuntime
}

func (noContainerRuntime) GetHostPort(context.Context, string, string) (string, error) {
	return "", errNoContainerRuntime
}

func (noContainerRuntime) GetContainerIPs(context.Context, string) (string, string, error) {
	return "", "", errNoContainerRuntime
}

func (noContainerRuntime) GetContainerLogs(context.Context, string) (string, error) {
	return "", errNoContainerRuntime
}

func (noContainerRuntime) ExecContainer(context.Context, string, *container.ExecContainerInput, string, ...string) error {
	return errNoContainerRuntime
}

func (noContainerRuntime) RunContainer(context.Context, *container.RunContainerInput, io.Writer) error {
	return errNoContainerRuntime
}

func (noContainerRuntime) ListContainers(context.Context, container.FilterBuilder) ([]container.Container, error) {
	return nil, errNoContainerRuntime
}

func (noContainerRuntime) ContainerDebugInfo(context.Context, string, io.Writer) error {
	return errNoContainerRuntime
}
func (noContainerRuntime) DeleteContainer(context.Context, string) error {
	return errNoContainerRuntime
}
func (noContainerRuntime) KillContainer(context.Context, string, string) error {
	return errNoContainerRuntime
}

var _ container.Runtime = noContainerRuntime{}
