package sandbox

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// clusterCA is the certificate authority of a cluster that CAPI provisions
// (provision: capi). As kubeadm sets a cluster up, one CA signs the
// apiserver's serving certificate and its clients' certificates, and the
// parent keeps it in the Secret <name>-ca, from which CAPI writes the
// cluster's kubeconfig. It is the apiserver's envtest Authn too, so that
// the sandbox's own users of that apiserver are signed by it as well.
type clusterCA struct {
	name    string
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
	keyPEM  []byte

	mu     sync.Mutex // AddUser may be called concurrently
	serial int64
	caFile string
}

var _ envtest.Authn = (*clusterCA)(nil)

// newClusterCA makes the CA of cluster name.
func newClusterCA(name string) (*clusterCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("failed to generate the CA key of cluster %q: %w", name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("failed to make the CA of cluster %q: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &clusterCA{
		name: name, cert: cert, key: key, serial: 1,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// sign issues a certificate for a new key from tmpl, signed by the CA.
func (ca *clusterCA) sign(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	ca.mu.Lock()
	ca.serial++
	tmpl.SerialNumber = big.NewInt(ca.serial)
	ca.mu.Unlock()
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(365 * 24 * time.Hour)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to sign a certificate with the CA of cluster %q: %w", ca.name, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// useFor makes api serve with a certificate of the CA and accept the
// CA's client certificates, serving names too: it writes the serving certificate into a
// certificate directory of its own under dir, which envtest then keeps.
func (ca *clusterCA) useFor(api *envtest.APIServer, dir string, names ...string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	crt, key, err := ca.sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    append([]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}, names...),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return err
	}
	// envtest writes the service account signing key only beside a
	// serving certificate of its own making: so this one too.
	saCrt, saKey, err := ca.sign(&x509.Certificate{Subject: pkix.Name{CommonName: "service-accounts"}, KeyUsage: x509.KeyUsageDigitalSignature})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"apiserver.crt": crt, "apiserver.key": key, "sa-signer.crt": saCrt, "sa-signer.key": saKey} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	api.CertDir = dir
	api.CA = ca.certPEM
	api.Authn = ca
	return nil
}

// Configure points the apiserver's client CA at this CA.
func (ca *clusterCA) Configure(workDir string, args *envtest.Arguments) error {
	ca.caFile = filepath.Join(workDir, "client-ca.crt")
	args.Set("client-ca-file", ca.caFile)
	return nil
}

// Start writes the client CA file.
func (ca *clusterCA) Start() error {
	return os.WriteFile(ca.caFile, ca.certPEM, 0o600)
}

// AddUser returns baseCfg with a client certificate of the CA for user.
func (ca *clusterCA) AddUser(user envtest.User, baseCfg *rest.Config) (*rest.Config, error) {
	crt, key, err := ca.sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user.Name, Organization: user.Groups},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(baseCfg)
	cfg.CertData, cfg.KeyData = crt, key
	return cfg, nil
}

// Stop has nothing to stop.
func (ca *clusterCA) Stop() error { return nil }
